import type { EnforcementLevel, ResultStatus, RunStage, StageStatus, Tags } from "./run-tasks.js";

/**
 * Stored shapes of the run task aggregates (spec 2.1-2.3, decisions D11, D13, D15-D18). Secrets
 * reach storage only sealed (HMAC keys, delivery payloads) or as SHA-256 digests (access tokens).
 * Every record that changes state carries a `version`: the core writes it with `version + 1` and
 * the store's compare-and-set primitives check the old one.
 */

/** The only run task category (the real API has no other). */
export const RUN_TASK_CATEGORIES = ["task"] as const;
export type RunTaskCategory = (typeof RUN_TASK_CATEGORIES)[number];

/**
 * A run task's organization-wide attachment (wire `global-configuration`). Stored and shown; runplane
 * does not yet create stages from it (workspace tasks alone do).
 */
export interface GlobalConfiguration {
  enabled: boolean;
  /** In run order, no duplicates; may be empty while disabled. */
  stages: RunStage[];
  enforcementLevel: EnforcementLevel;
}

/** What a task has until a client sets its global configuration (also the SQL column default). */
export const DEFAULT_GLOBAL_CONFIGURATION: GlobalConfiguration = { enabled: false, stages: [], enforcementLevel: "advisory" };

/** An organization run task (type `tasks`, id `task-`). */
export interface RunTaskRecord {
  id: string;
  organization: string;
  name: string;
  url: string;
  description: string | null;
  category: RunTaskCategory;
  enabled: boolean;
  /** The keyring's sealed string (row binding `tasks|hmac_key|<id>`, D11), or null without a key. */
  hmacKey: string | null;
  globalConfiguration: GlobalConfiguration;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** A run task attached to a workspace (type `workspace-tasks`, id `wstask-`). */
export interface WorkspaceTaskRecord {
  id: string;
  workspaceId: string;
  organization: string;
  taskId: string;
  enforcementLevel: EnforcementLevel;
  /** Non-empty, in run order, no duplicates. */
  stages: RunStage[];
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface RunVcs {
  branch: string | null;
  repoUrl: string | null;
  commitUrl: string | null;
  /** Optional: runs stored before `vcs_commit_hash` was sent have none (the SQL adapters keep vcs as JSON). */
  commitHash?: string | null;
  pullRequestUrl: string | null;
}

/** What runplane keeps of a host's run: what the run task request needs (spec 4.1). Immutable. */
export interface RunRecord {
  id: string;
  organization: string;
  workspaceId: string;
  message: string;
  createdBy: string;
  createdAt: string;
  isSpeculative: boolean;
  configurationVersionId: string;
  configurationVersionDownloadable: boolean;
  planId: string;
  vcs: RunVcs | null;
}

/** `<status>-at` (hyphenated) to an RFC 3339 time (D9). */
export type StatusTimestampMap = Record<string, string>;

/** One run stage that has tasks (type `task-stages`, id `ts-`). */
export interface TaskStageRecord {
  id: string;
  runId: string;
  workspaceId: string;
  organization: string;
  stage: RunStage;
  /** Index of `stage` in run order; stages of a run list in this order. */
  sequence: number;
  status: StageStatus;
  statusTimestamps: StatusTimestampMap;
  /** Set by the override: the stage's failed mandatory results no longer block (D13). */
  overridden: boolean;
  overrideComment: string | null;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** One workspace task's result inside a stage (type `task-results`, id `taskrs-`). */
export interface TaskResultRecord {
  id: string;
  stageId: string;
  runId: string;
  workspaceId: string;
  organization: string;
  stage: RunStage;
  /** Index inside the stage; results of a stage list in this order. */
  position: number;
  status: ResultStatus;
  message: string | null;
  url: string | null;
  statusTimestamps: StatusTimestampMap;
  /** Snapshots of the task and workspace task when the run was created. */
  taskId: string;
  taskName: string;
  taskUrl: string;
  workspaceTaskId: string;
  enforcementLevel: EnforcementLevel;
  isSpeculative: boolean;
  outcomesCount: number;
  /** SHA-256 hex of the callback access token (D17); null until the stage starts. Unique. */
  accessTokenDigest: string | null;
  /**
   * After this instant the access token no longer authenticates and the sweeper settles the
   * result (D16, D17). Null until the first delivery attempt opens the window.
   */
  deadlineAt: string | null;
  /** With the idle/max deadline rule: the cap a `running` callback cannot push `deadlineAt` past. */
  deadlineMaxAt: string | null;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** An outcome reported by a callback (D18; id `tro-`). Immutable once stored. */
export interface TaskResultOutcomeRecord {
  id: string;
  taskResultId: string;
  /** Index among the result's outcomes, in the order they were received. */
  position: number;
  outcomeId: string;
  description: string;
  body: string | null;
  url: string | null;
  /** Write form (header name to entries), as received. */
  tags: Tags;
  /** Lower-cased label of the enriched `severity` tag (filter), or null. Computed by the core. */
  severityLabel: string | null;
  /** 0 none, 1 info, 2 warning, 3 error: `sort=severity` orders by it, descending. */
  severityRank: number;
  /** Lower-cased label of the enriched `status` tag (filter), or null. */
  statusLabel: string | null;
  createdAt: string;
}

/**
 * One outbox row per result of a started stage (decision D15), written in the same storage step as
 * the stage's `pending -> running`. The dispatcher claims due rows with a lease: it sets
 * `leaseOwner`/`leaseExpiresAt` and increments `fencingToken` in one compare-and-set, and every
 * later write of that attempt must present the token it got, so a worker whose claim was replaced
 * can no longer record anything.
 *
 * `payload` is the exact request body (spec 4.1, built and serialized once, D14) sealed with the
 * keyring under the row binding `task_deliveries|payload|<id>`: it contains the result's callback
 * access token, which runplane otherwise keeps only as a digest (D17), so it never rests in
 * plaintext. The dispatcher opens it, signs those bytes with the task's HMAC key and sends them.
 */
export interface TaskDeliveryRecord {
  id: string;
  taskResultId: string;
  stageId: string;
  runId: string;
  taskId: string;
  stage: RunStage;
  url: string;
  /** Attempts made so far (0 when none). */
  attempt: number;
  dueAt: string;
  leaseOwner: string | null;
  leaseExpiresAt: string | null;
  fencingToken: number;
  payload: string;
  createdAt: string;
  /** When the integration answered 200; null until then (and forever when it never did). */
  deliveredAt: string | null;
  /**
   * When the row stopped needing attempts: a 200, a result that no longer waits for the request
   * (a callback proved receipt, or it is final), or no retry left before the deadline. Null while
   * the row is due or waiting for a retry; only rows with a null `closedAt` are ever claimed.
   */
  closedAt: string | null;
  /** Why the latest attempt failed, in words safe to store and show (no URL, header or body). */
  lastError: string | null;
}

/** Filter and order of an outcome list (D18). Labels are compared exactly (the core lower-cases). */
export interface OutcomeListQuery {
  severity?: string;
  status?: string;
  /** `position` (received order, the default) or `severity` (rank descending, then position). */
  sort: "position" | "severity";
}
