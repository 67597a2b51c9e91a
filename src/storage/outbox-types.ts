import type { DeliveryAttemptRecord } from "../schemas/delivery-attempts.js";
import type { TaskDeliveryRecord, TaskResultRecord } from "../schemas/run-task-records.js";
import type { ResultStatus } from "../schemas/run-tasks.js";
import type { Expected, GuardedResult } from "./guarded.js";

/**
 * The delivery outbox part of the Storage contract (decisions D15, D16, D31): rows claimed under a
 * lease, their attempts settled in batches guarded by each row's fencing token. The general rules
 * of `Storage` hold.
 */

/** What `TaskDeliveryStore.claim` is asked for. */
export interface DeliveryClaim {
  /** ISO-8601 time the claim is made at: rows due at or before it are claimable. */
  now: string;
  /** Who holds the lease, stored in `leaseOwner`. */
  owner: string;
  /** The lease runs out `leaseMs` after `now`; then another owner may claim the row. */
  leaseMs: number;
  /** At most this many rows. */
  limit: number;
  /**
   * decision D16: the deadline window a claimed row's result gets when it is still `pending` and
   * has none yet (this is its first attempt): `deadlineAt = now + ms`, `deadlineMaxAt = now + maxMs`
   * (null when `maxMs` is null).
   */
  window: { ms: number; maxMs: number | null };
  /**
   * decision D34: which rows by agent pool. Absent or null: only rows without a pool (the
   * platform's own dispatcher, so callers written before pools never send a pool's row); a list:
   * only rows of those pools (an agent dispatcher), none for an empty list.
   */
  pools?: readonly string[] | null;
}

/** What a claimed row's attempt needs of its result, as stored when the claim committed. */
export interface ClaimedResult {
  status: ResultStatus;
  statusTimestamps: TaskResultRecord["statusTimestamps"];
  deadlineAt: string | null;
  version: number;
  updatedAt: string;
}

/**
 * A row leased by `claim`, payload included, with what its attempt needs, read in the claim's own
 * step so a dispatcher reads nothing more before it sends: its result (null when gone) and its run
 * task's sealed HMAC key (`task` null when the task was deleted).
 */
export interface ClaimedDelivery {
  row: TaskDeliveryRecord;
  result: ClaimedResult | null;
  task: { hmacKey: string | null } | null;
}

/** The end of a row's attempts, written by a `close` settlement. */
export interface DeliveryCompletion {
  attempt: number;
  closedAt: string;
  deliveredAt: string | null;
  lastError: string | null;
}

/** A failed attempt's next try, written by a `retry` settlement. */
export interface DeliveryRetry {
  attempt: number;
  dueAt: string;
  lastError: string;
}

/**
 * A result's status change written in the same step as a `close` (decision D15: the integration's
 * 200 moves its result `pending -> running`). Only these four columns are written.
 */
export interface ResultAdvance {
  id: string;
  expected: Expected<ResultStatus>;
  status: ResultStatus;
  statusTimestamps: TaskResultRecord["statusTimestamps"];
  version: number;
  updatedAt: string;
}

/**
 * One row's settlement in a `settle` batch, guarded by the fencing token its claim handed out. A
 * close or retry that ends an attempt may carry its `record` (decision D31), stored with the row.
 */
export type DeliverySettlement = { id: string; fencingToken: number } & (
  | { type: "close"; fields: DeliveryCompletion; result?: ResultAdvance; record?: DeliveryAttemptRecord }
  | { type: "retry"; fields: DeliveryRetry; record?: DeliveryAttemptRecord }
  | { type: "release" }
  /** decision D58: a job handed to an agent: its `under-way` record, the row and its lease kept as they are. */
  | { type: "hand-out"; record: DeliveryAttemptRecord }
);

/** What `settle` did with one entry of its batch. */
export interface SettleOutcome {
  /** The row's write happened (it was open and still carried the presented token). */
  written: boolean;
  /** The entry's `result` advance happened (false when it had none). */
  result: boolean;
}

/**
 * The delivery outbox (D15). Rows are inserted only by `TaskStageStore.start`; afterwards only
 * `claim` and `settle` change them. A claim hands out a new `fencingToken` (one more than the row's
 * previous one); a settlement writes only while the row is open and still carries the token the
 * caller presents, so a dispatcher whose claim was replaced by a newer one can never overwrite it.
 * Both are batched: a dispatcher claims many rows in one step and settles the attempts that ended
 * together in one step, so a delivery costs a share of one claim and a share of one settle.
 */
export interface TaskDeliveryStore {
  get(id: string): Promise<TaskDeliveryRecord | null>;
  /** Rows of one result ordered by `createdAt`, then `id`. */
  listByResult(taskResultId: string): Promise<TaskDeliveryRecord[]>;
  /**
   * Atomically leases up to `limit` rows that are open (`closedAt` null), due (`dueAt <= now`),
   * not leased (no `leaseExpiresAt`, or one not after `now`) and of the pools `request.pools`
   * names (absent or null: rows whose `agentPoolId` is null), in `dueAt`, then `id` order: each
   * gets `leaseOwner = owner`, `leaseExpiresAt = now + leaseMs` and `fencingToken + 1`. In the same
   * step each claimed row's result that is `pending` with a null `deadlineAt` gets its window
   * (`request.window`), `version + 1` and `updatedAt = now`. Resolves the claimed rows in that order
   * as stored, each with its result and task as stored after the step. Of concurrent claims (other
   * connections and processes included) no two ever get the same row with the same lease: a row is
   * held by at most one owner at a time.
   *
   * decision D58: a claimed row with a pool whose attempt `attempt + 1` is stored `under-way` (an
   * agent took it and its report never came: the host that handed it out died, or gave the row
   * back) has that attempt closed in the same step: outcome `failed`, `errorCode` `no-report`,
   * `detail` `noReportDetail(agentName ?? agentId)`, `durationMs` from its `startedAt` to `now`;
   * the row's `attempt` counts it (one more) and its `lastError` is that detail, as returned.
   */
  claim(request: DeliveryClaim): Promise<ClaimedDelivery[]>;
  /**
   * Writes a batch of settlements in one atomic step and resolves one outcome per entry, in order.
   * An entry is written only while its row is open and carries `fencingToken`; otherwise nothing of
   * that entry is written (`written: false`) and the other entries are unaffected. `close` sets
   * `attempt`, `closedAt`, `deliveredAt` and `lastError`; `retry` sets `attempt`, `dueAt` and
   * `lastError`, so the row is claimable again from `dueAt`; `release` leaves those alone. All three
   * clear `leaseOwner` and `leaseExpiresAt`; a `hand-out` (decision D58) changes nothing of the row
   * and stores its `record` only. A close's `result` advance is written only when the
   * row's write was and the result still matches `expected` (status and version); it writes the
   * result's `status`, `statusTimestamps`, `version` and `updatedAt` and nothing else. An entry's
   * `record` (decision D31) is stored, as `DeliveryAttemptStore` keeps attempts, only when the
   * entry's row write happened. An empty batch writes nothing; a batch naming one row twice is
   * refused whole (it throws a TypeError).
   */
  settle(batch: readonly DeliverySettlement[]): Promise<SettleOutcome[]>;
  /**
   * decision D31, "retry now": makes the next attempt of a retrying result due at `now`. The row
   * it moves is the result's open row (`closedAt` null) that has had an attempt (`attempt > 0`),
   * while the result is still `pending` with a `deadlineAt` after `now` (D16); its `dueAt` becomes
   * `now` when it was later (an earlier one stays) and nothing else changes. Checked and written
   * in one atomic step: `not-retrying` when no such row exists, `leased` when the row is held by
   * a claim that has not run out at `now` (an attempt is under way); nothing is written then. Of
   * a racing claim and expedite, the claim either leases the row as it was or the row as moved,
   * never both. With `Storage.listen`, a moved row wakes the listeners (D27).
   */
  expedite(taskResultId: string, now: string): Promise<GuardedResult<"not-retrying" | "leased">>;
  /**
   * Optional, for metrics and health checks: counts over the open rows (`closedAt`
   * null) at `now`: `due` are the rows a claim at `now` would take (due and not leased), `leased`
   * the rows whose `leaseExpiresAt` is after `now`, and `oldestDueAt` the smallest `dueAt` among
   * the due ones (null when none); `retrying` the rows that have had an attempt (`attempt > 0`:
   * a failed one, since a 200 closes the row) and `oldestRetryingAt` the smallest `createdAt`
   * among them (null when none), for the health check of delivery attempts (D31). Reads only, in one statement over
   * the open rows; cheap enough to call on every metrics scrape and health check. Without it the
   * outbox gauges are not reported and `health()` cannot see results retrying.
   */
  stats?(now: string): Promise<OutboxStats>;
  /**
   * Optional, decision D34: per agent pool, the open rows due and not leased at `now` (those a
   * pool's agents would take) and the smallest `dueAt` among them, ordered by pool id, at most
   * `limit` pools; rows without a pool are not counted. Reads only, in one statement. Without it
   * `health()` cannot see a pool whose requests wait with no agent connected.
   */
  waitingByPool?(now: string, limit: number): Promise<PoolBacklog[]>;
}

/** What {@link TaskDeliveryStore.waitingByPool} counts of one pool. */
export interface PoolBacklog {
  agentPoolId: string;
  due: number;
  oldestDueAt: string;
}

/** What {@link TaskDeliveryStore.stats} counts. */
export interface OutboxStats {
  due: number;
  leased: number;
  oldestDueAt: string | null;
  /** Open rows with at least one (failed) attempt: results being retried. */
  retrying: number;
  /** The smallest `createdAt` of those rows. */
  oldestRetryingAt: string | null;
}
