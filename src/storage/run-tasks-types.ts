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
import type { Expected, GuardedResult } from "./guarded.js";

export type { Expected } from "./guarded.js";
export type {
  DeliveryClaim,
  ClaimedResult,
  ClaimedDelivery,
  DeliveryCompletion,
  DeliveryRetry,
  ResultAdvance,
  DeliverySettlement,
  SettleOutcome,
  TaskDeliveryStore,
  OutboxStats,
  PoolBacklog,
} from "./outbox-types.js";

/**
 * The run task part of the Storage contract (decisions D13, D15-D18). The general rules of
 * `Storage` hold. State changes go through compare-and-set primitives: the caller passes the
 * status set and the `version` it read, and the write happens only while both still hold.
 */

/** Organization run tasks. `(organization, name)` is unique. */
export interface RunTaskStore {
  get(id: string): Promise<RunTaskRecord | null>;
  /**
   * The tasks of `ids` that exist, ordered by id (an id twice is read once). Optional: starting a
   * stage reads its results' tasks with it in one step, and with `get` per task without it.
   */
  getMany?(ids: readonly string[]): Promise<RunTaskRecord[]>;
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
  /** How many tasks name `agentPoolId` as their agent pool (`agentPoolId`), across organizations. */
  countByAgentPool(agentPoolId: string): Promise<number>;
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
   * across organizations: ids are the host's and may repeat (D24), so a reader takes the
   * first it may read. Optional; without it only the newest (`findByArtifact`) is considered.
   */
  listByArtifact?(kind: RunArtifactKind, id: string, limit: number): Promise<RunRecord[]>;
  /**
   * One page of the runs of `workspaceId`, newest first: by `createdAt` descending, ties broken by
   * `id` descending (the results page's workspace view, D25). `total` counts every run of it.
   */
  listByWorkspace(workspaceId: string, page: PageRequest): Promise<Page<RunRecord>>;
}

/** What a run is found by: the two artifacts integrations download (decision D24) and its apply (`RunRecord.applyId`). */
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
   * changes: `accessTokenDigest`, `agentPoolId`, `deadlineAt` and `deadlineMaxAt` (decision D34:
   * a pool's result opens its window when its stage starts), `version` and `updatedAt`.
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
