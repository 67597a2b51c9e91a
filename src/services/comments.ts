import { invalid } from "../errors.js";
import type { Page, PageRequest } from "../schemas/records.js";
import { COMMENT_LIMITS, CommentCreateSchema, type CommentRecord } from "../schemas/run-comments.js";
import type { RunRecord } from "../schemas/run-task-records.js";
import { isoNow, type ServiceContext } from "./context.js";
import { parseOrThrow } from "./validate.js";

/**
 * Comments on runs. Unchecked like the other services: the HTTP routes authorize first.
 * A body is validated whole before anything is written (D30); a run holds at most
 * `COMMENT_LIMITS.perRun` comments, checked by the store in the same step as the insert.
 */
export function createCommentService(ctx: ServiceContext) {
  const s = ctx.storage.comments;
  return {
    /** Stores a comment on `run` from `attributes` (`{ body }`), written by `authorId` (null for a team or organization). */
    async create(run: RunRecord, attributes: unknown, authorId: string | null): Promise<CommentRecord> {
      const input = parseOrThrow(CommentCreateSchema, attributes, "/data/attributes");
      const record: CommentRecord = {
        id: ctx.newId("wsc"),
        runId: run.id,
        workspaceId: run.workspaceId,
        organization: run.organization,
        body: input.body,
        authorId,
        createdAt: isoNow(ctx),
      };
      const stored = await s.insert(record, COMMENT_LIMITS.perRun);
      if (!stored.ok) throw invalid("/data", `A run holds at most ${COMMENT_LIMITS.perRun} comments`);
      return record;
    },
    get: (id: string): Promise<CommentRecord | null> => s.get(id),
    /** A run's comments, oldest first; all of them without `page` (at most `COMMENT_LIMITS.perRun`). */
    list: (runId: string, page?: PageRequest): Promise<Page<CommentRecord>> => s.listByRun(runId, page),
  };
}
export type CommentService = ReturnType<typeof createCommentService>;
