import type { DeliveryAttemptRecord } from "../schemas/delivery-attempts.js";
import type { Page, PageRequest } from "../schemas/records.js";

/**
 * Delivery attempts (decision D31). The general rules of `Storage` hold. Attempts are
 * written only by `TaskDeliveryStore.settle`, in the step that settles their row (an entry's
 * `record`); they never change afterwards, but for one `under-way` (decision D58), completed in
 * its place by its attempt's end (`settle`) or closed as `no-report` by the claim that re-takes
 * its row.
 *
 * A result keeps at most `ATTEMPT_LIMITS.perResult` (20) attempts: an attempt takes the place of
 * the one of the same result whose `number` is lower by a multiple of 20, and never gives its place
 * to an older one (of equal numbers the one stored stays). A result's attempt numbers grow by one
 * per attempt, so what is kept is its newest 20, however many writers race: a slot per
 * `(number - 1) % 20` holds it in one statement, with no count and no lock.
 */
export interface DeliveryAttemptStore {
  /**
   * One page of a result's attempts, newest first: by `startedAt` descending, then `number`
   * descending, then `id` descending. `total` counts all of the result's attempts.
   */
  list(taskResultId: string, page: PageRequest): Promise<Page<DeliveryAttemptRecord>>;
  /**
   * Removes up to `limit` attempts (of any result) whose `startedAt` is before `before`, oldest
   * first, and resolves how many it removed: the retention sweep calls it until it removes fewer
   * than `limit`. Served by an index, so a sweep with nothing to remove reads nothing else.
   */
  prune(before: string, limit: number): Promise<number>;
}


export type { DeliveryAttemptRecord } from "../schemas/delivery-attempts.js";
