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
  /** Tasks holding a sealed HMAC key with `id > afterId` (all when null), ordered by `id`, at most `limit`. */
  scanSealed(afterId: string | null, limit: number): Promise<RunTaskRecord[]>;
  /** Swaps the sealed HMAC key only while it still equals `expected`; `version` is left alone. */
  replaceSealedKey(id: string, expected: string, next: string): Promise<boolean>;
}

/** Run tasks attached to workspaces. `(workspaceId, taskId)` is unique. */
export interface WorkspaceTaskStore {
  get(id: string): Promise<WorkspaceTaskRecord | null>;
  /** Workspace tasks of one workspace ordered by `createdAt`, then `id`; all when `page` is omitted. */
  list(workspaceId: string, page?: PageRequest): Promise<Page<WorkspaceTaskRecord>>;
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
}

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
   * when the guard failed or the stage does not exist (nothing written).
   */
  transition(id: string, expected: Expected<StageStatus>, next: TaskStageRecord): Promise<TaskStageRecord | null>;
  /**
   * Starts a stage in one atomic step: the stage's compare-and-set, each result's compare-and-set
   * and the insertion of `deliveries`. When any guard fails nothing at all is written and it
   * resolves null; otherwise it resolves the stored stage.
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
}

/** The end of a row's attempts, written by `TaskDeliveryStore.complete`. */
export interface DeliveryCompletion {
  attempt: number;
  closedAt: string;
  deliveredAt: string | null;
  lastError: string | null;
}

/** A failed attempt's next try, written by `TaskDeliveryStore.reschedule`. */
export interface DeliveryRetry {
  attempt: number;
  dueAt: string;
  lastError: string;
}

/**
 * The delivery outbox (D15). Rows are inserted only by `TaskStageStore.start`; afterwards only the
 * lease primitives below change them. A claim hands out a new `fencingToken` (one more than the
 * row's previous one); `complete`, `reschedule` and `release` write only while the row still
 * carries the token the caller presents, so a dispatcher whose claim was replaced by a newer one
 * can never overwrite it: it gets `false` and nothing is written.
 */
export interface TaskDeliveryStore {
  get(id: string): Promise<TaskDeliveryRecord | null>;
  /** Rows of one result ordered by `createdAt`, then `id`. */
  listByResult(taskResultId: string): Promise<TaskDeliveryRecord[]>;
  /**
   * Atomically leases up to `limit` rows that are open (`closedAt` null), due (`dueAt <= now`)
   * and not leased (no `leaseExpiresAt`, or one not after `now`), in `dueAt`, then `id` order: each
   * gets `leaseOwner = owner`, `leaseExpiresAt = now + leaseMs` and `fencingToken + 1`. Resolves
   * the rows as stored. Of concurrent claims (other connections and processes included) no two
   * ever get the same row with the same lease: a row is held by at most one owner at a time.
   */
  claim(request: DeliveryClaim): Promise<TaskDeliveryRecord[]>;
  /**
   * Closes an open row holding `fencingToken`: sets the given fields and clears the lease. `false`
   * (nothing written) when the row is gone, closed, or carries another token.
   */
  complete(id: string, fencingToken: number, fields: DeliveryCompletion): Promise<boolean>;
  /**
   * Records a failed attempt of an open row holding `fencingToken`: sets `attempt`, `dueAt` and
   * `lastError` and clears the lease, so the row is claimable again from `dueAt`. `false` (nothing
   * written) when the row is gone, closed, or carries another token.
   */
  reschedule(id: string, fencingToken: number, fields: DeliveryRetry): Promise<boolean>;
  /**
   * Gives a lease back unused: clears `leaseOwner`/`leaseExpiresAt` of an open row holding
   * `fencingToken`, leaving `attempt` and `dueAt` alone. `false` otherwise.
   */
  release(id: string, fencingToken: number): Promise<boolean>;
}
