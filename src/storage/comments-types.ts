import type { CommentRecord } from "../schemas/run-comments.js";
import type { Page, PageRequest } from "../schemas/records.js";
import type { GuardedResult } from "./guarded.js";

/**
 * Comments on runs. The general rules of `Storage` hold. A comment never changes after
 * insert; a run holds at most the `maxPerRun` the core passes (`COMMENT_LIMITS.perRun`).
 */
export interface CommentStore {
  get(id: string): Promise<CommentRecord | null>;
  /**
   * Inserts unless the run (`record.runId`) already holds `maxPerRun` comments (`limit`, nothing
   * written), counted and written in one atomic step: of racing inserts into a run with one place
   * left exactly one succeeds. Ids are fresh from the core; inserting an id that exists is a
   * programming error: the adapter throws and the stored row is untouched.
   */
  insert(record: CommentRecord, maxPerRun: number): Promise<GuardedResult<"limit">>;
  /**
   * Comments of one run ordered by `createdAt`, then `id`; every one when `page` is omitted.
   * `total` counts all of the run's comments, whatever the page.
   */
  listByRun(runId: string, page?: PageRequest): Promise<Page<CommentRecord>>;
}
