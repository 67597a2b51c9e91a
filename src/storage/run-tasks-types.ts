import type { Page, PageRequest } from "../schemas/records.js";
import type {
  OutcomeListQuery,
  RunRecord,
  RunTaskRecord,
  TaskDeliveryRecord,
  TaskResultOutcomeRecord,
  TaskResultRecord,
  TaskStageRecord,
  WorkspaceTaskRecord,
} from "../schemas/run-task-records.js";
import type { ResultStatus, RunStage, StageStatus } from "../schemas/run-tasks.js";
import type { DeliveryAttemptRecord } from "../schemas/delivery-attempts.js";
import type { GuardedResult } from "./types.js";

/**
 * The run task part of the Storage contract (decisions D13, D15-D18). The general rules of
 * `Storage` hold. State changes go through compare-and-set primitives: the caller passes the
 * status set and the `version` it read, and the write happens only while both still hold.
 */

/** What a compare-and-set expects of the stored row. */
export interface Expected<S extends string> {
  statuses: readonly S[];
  version: number;
}

/** Organization run tasks. `(organization, name)` is unique. */
export interface RunTaskStore {
  get(id: string): Promise<RunTaskRecord | null>;
  /** Tasks of one organization ordered by `createdAt`, then `id`; every one when `page` is omitted. */
  list(organization: string, page?: PageRequest): Promise<Page<RunTaskRecord>>;
  /** Inserts unless `(organization, name)` is taken (`duplicate-name`), checked atomically. */
  insert(record: RunTaskRecord): Promise<GuardedResult<"duplicate-name">>;
  /**
   * Replaces the row with `record` while its `version` still equals `expectedVersion`: `missing`
   * when it is gone, `stale` when another update won, `duplicate-name` when the new name is taken.
   */
  update(record: RunTaskRecord, expectedVersion: number): Promise<GuardedResult<"missing" | "stale" | "duplicate-name">>;
  /** Removes the task and, in the same step, every workspace task that refers to it. */
  delete(id: string): Promise<boolean>;
}

/** Run tasks attached to workspaces. `(workspaceId, taskId)` is unique. */
export interface WorkspaceTaskStore {
  get(id: string): Promise<WorkspaceTaskRecord | null>;
  /** Workspace tasks of one workspace ordered by `createdAt`, then `id`; all when `page` is omitted. */
  list(workspaceId: string, page?: PageRequest): Promise<Page<WorkspaceTaskRecord>>;
  /** Every workspace task that refers to `taskId`, across workspaces, ordered by `createdAt`, then `id`. */
  listByTask(taskId: string): Promise<WorkspaceTaskRecord[]>;
  /**
   * Inserts, checked atomically: `duplicate-task` when the workspace already has this task,
   * `missing-task` when no run task with `taskId` exists (a concurrent delete cannot leave an orphan).
   */
  insert(record: WorkspaceTaskRecord): Promise<GuardedResult<"duplicate-task" | "missing-task">>;
  /** Replaces while `version` equals `expectedVersion` (`missing`, `stale` otherwise). */
  update(record: WorkspaceTaskRecord, expectedVersion: number): Promise<GuardedResult<"missing" | "stale">>;
  delete(id: string): Promise<boolean>;
}

export interface RunStore {
  get(id: string): Promise<RunRecord | null>;
  /**
   * Stores a run together with its stages and their results in one atomic step. `false`, and
   * nothing written, when a run with this id already exists: of racing creates of one run id
   * exactly one stores anything.
   */
  create(run: RunRecord, stages: readonly TaskStageRecord[], results: readonly TaskResultRecord[]): Promise<boolean>;
  /**
   * The newest run (by `createdAt`, then id) whose `planId` (`plan`), `applyId` (`apply`) or
   * `configurationVersionId` (`configuration-version`) equals `id`, or null. Optional (decision
   * D24): without it only a result's access token can download artifacts and read its plan, API
   * credentials get 404 for anything addressed by a plan, apply or configuration version id.
   */
  findByArtifact?(kind: RunArtifactKind, id: string): Promise<RunRecord | null>;
  /**
   * Up to `limit` runs naming `id` as `findByArtifact` matches it, newest first (the same order),
   * across organizations: ids are the host's and may repeat (issue 34.6), so a reader takes the
   * first it may read. Optional; without it only the newest (`findByArtifact`) is considered.
   */
  listByArtifact?(kind: RunArtifactKind, id: string, limit: number): Promise<RunRecord[]>;
  /**
   * One page of the runs of `workspaceId`, newest first: by `createdAt` descending, ties broken by
   * `id` descending (the results page's workspace view, D25). `total` counts every run of it.
   */
  listByWorkspace(workspaceId: string, page: PageRequest): Promise<Page<RunRecord>>;
}

/** What a run is found by: the two artifacts integrations download (decision D24) and its apply (issue 27). */
export type RunArtifactKind = "plan" | "apply" | "configuration-version";

/** A result written by `TaskStageStore.start`, guarded like `TaskResultStore.transition`. */
export interface GuardedResultWrite {
  next: TaskResultRecord;
  expected: Expected<ResultStatus>;
}

export interface TaskStageStore {
  get(id: string): Promise<TaskStageRecord | null>;
  /** The stage of `runId` for one run stage, or null. */
  getByRun(runId: string, stage: RunStage): Promise<TaskStageRecord | null>;
  /** Stages of one run ordered by `sequence`; all when `page` is omitted. */
  listByRun(runId: string, page?: PageRequest): Promise<Page<TaskStageRecord>>;
  /**
   * Compare-and-set: replaces the stage with `next` (same id) only while the stored status is one
   * of `expected.statuses` and its version is `expected.version`. Resolves the stored row, or null
   * when the guard failed or the stage does not exist (nothing written). `next` keeps the fields
   * fixed when the run was created (ids, `organization`, `stage`, `sequence`, `createdAt`): an
   * adapter writes only the state fields, so an update touches no index it does not change.
   */
  transition(id: string, expected: Expected<StageStatus>, next: TaskStageRecord): Promise<TaskStageRecord | null>;
  /**
   * Starts a stage in one atomic step: the stage's compare-and-set, each result's compare-and-set
   * and the insertion of `deliveries`. When any guard fails nothing at all is written and it
   * resolves null; otherwise it resolves the stored stage. Of each result it writes what a start
   * changes: `accessTokenDigest`, `version` and `updatedAt`.
   */
  start(
    next: TaskStageRecord,
    expected: Expected<StageStatus>,
    results: readonly GuardedResultWrite[],
    deliveries: readonly TaskDeliveryRecord[],
  ): Promise<TaskStageRecord | null>;
  /**
   * Stages still `running` although none of their results is `pending` or `running`, ordered by
   * `id`, at most `limit`. A process that stopped between a result's final write and the stage's
   * recompute leaves one behind; the deadline sweeper settles it (D13, D16).
   */
  listUnsettled(limit: number): Promise<TaskStageRecord[]>;
}

export interface TaskResultStore {
  get(id: string): Promise<TaskResultRecord | null>;
  /** Results of one stage ordered by `position`. */
  listByStage(stageId: string): Promise<TaskResultRecord[]>;
  /** The result whose access token digest equals `digest` exactly, or null. */
  findByTokenDigest(digest: string): Promise<TaskResultRecord | null>;
  /**
   * Compare-and-set: replaces the result with `next` and inserts `outcomes` in one atomic step,
   * only while the stored status is one of `expected.statuses` and its version is
   * `expected.version`. Resolves the stored row, or null (nothing written) when the guard failed.
   * Like a stage's, `next` keeps the fields fixed at creation; only the state fields are written.
   */
  transition(
    id: string,
    expected: Expected<ResultStatus>,
    next: TaskResultRecord,
    outcomes?: readonly TaskResultOutcomeRecord[],
  ): Promise<TaskResultRecord | null>;
  /**
   * The sweeper's query (D16): results whose `deadlineAt` is set and not after `now` while their
   * status is still `pending` or `running`, ordered by `deadlineAt`, then `id`, at most `limit`.
   * Served by an index, so a sweep never scans settled results.
   */
  listPastDeadline(now: string, limit: number): Promise<TaskResultRecord[]>;
}

export interface TaskResultOutcomeStore {
  get(id: string): Promise<TaskResultOutcomeRecord | null>;
  /**
   * One page of a result's outcomes, filtered by the exact `severityLabel`/`statusLabel` when
   * given, ordered by `position` or by `severityRank` descending then `position`; `total` counts
   * the filtered set.
   */
  list(taskResultId: string, query: OutcomeListQuery, page: PageRequest): Promise<Page<TaskResultOutcomeRecord>>;
  /**
   * The UTF-8 bytes of the bodies of a result's outcomes (an outcome without a body counts 0):
   * what the per-result body limit is checked against (D26). Outcomes are only ever inserted by
   * `TaskResultStore.transition`, with the result's version bump, so a sum read after reading the
   * result at version v is the sum at v whenever a compare-and-set on v then succeeds.
   */
  bodyBytes(taskResultId: string): Promise<number>;
}

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
   * Atomically leases up to `limit` rows that are open (`closedAt` null), due (`dueAt <= now`)
   * and not leased (no `leaseExpiresAt`, or one not after `now`), in `dueAt`, then `id` order: each
   * gets `leaseOwner = owner`, `leaseExpiresAt = now + leaseMs` and `fencingToken + 1`. In the same
   * step each claimed row's result that is `pending` with a null `deadlineAt` gets its window
   * (`request.window`), `version + 1` and `updatedAt = now`. Resolves the claimed rows in that order
   * as stored, each with its result and task as stored after the step. Of concurrent claims (other
   * connections and processes included) no two ever get the same row with the same lease: a row is
   * held by at most one owner at a time.
   */
  claim(request: DeliveryClaim): Promise<ClaimedDelivery[]>;
  /**
   * Writes a batch of settlements in one atomic step and resolves one outcome per entry, in order.
   * An entry is written only while its row is open and carries `fencingToken`; otherwise nothing of
   * that entry is written (`written: false`) and the other entries are unaffected. `close` sets
   * `attempt`, `closedAt`, `deliveredAt` and `lastError`; `retry` sets `attempt`, `dueAt` and
   * `lastError`, so the row is claimable again from `dueAt`; `release` leaves those alone. All three
   * clear `leaseOwner` and `leaseExpiresAt`. A close's `result` advance is written only when the
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
   * Optional, for metrics and health checks (issue 17): counts over the open rows (`closedAt`
   * null) at `now`: `due` are the rows a claim at `now` would take (due and not leased), `leased`
   * the rows whose `leaseExpiresAt` is after `now`, and `oldestDueAt` the smallest `dueAt` among
   * the due ones (null when none); `retrying` the rows that have had an attempt (`attempt > 0`:
   * a failed one, since a 200 closes the row) and `oldestRetryingAt` the smallest `createdAt`
   * among them (null when none), for issue 26's health check. Reads only, in one statement over
   * the open rows; cheap enough to call on every metrics scrape and health check. Without it the
   * outbox gauges are not reported and `health()` cannot see results retrying.
   */
  stats?(now: string): Promise<OutboxStats>;
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
