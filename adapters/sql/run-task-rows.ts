import type {
  GlobalConfiguration,
  RunRecord,
  RunTaskCategory,
  RunTaskRecord,
  RunVcs,
  StatusTimestampMap,
  TaskDeliveryRecord,
  TaskResultOutcomeRecord,
  TaskResultRecord,
  TaskStageRecord,
  WorkspaceTaskRecord,
} from "../../src/schemas/run-task-records.js";
import type { EnforcementLevel, ResultStatus, RunStage, StageStatus, Tags } from "../../src/schemas/run-tasks.js";
import type { TableColumns } from "./statements.js";

/**
 * Row <-> record converters of the run task tables (migration `run-tasks` of either adapter), with
 * the conventions of rows.ts: booleans as 0/1, arrays and maps as JSON text, enums cast (the core
 * validated them). Each table also lists its columns once, for the generated INSERT and UPDATE.
 */

const bool = (value: boolean): number => (value ? 1 : 0);
const json = (value: unknown): string => JSON.stringify(value);
const parse = <T>(text: string): T => JSON.parse(text) as T;

export interface RunTaskRow {
  id: string;
  organization: string;
  name: string;
  url: string;
  description: string | null;
  category: string;
  enabled: number;
  hmac_key: string | null;
  /** JSON of `GlobalConfiguration`, camel-case keys (migration `run-task-global-configuration`). */
  global_configuration: string;
  version: number;
  created_at: string;
  updated_at: string;
}
export const RUN_TASKS: TableColumns<RunTaskRow> = {
  table: "run_tasks",
  columns: ["id", "organization", "name", "url", "description", "category", "enabled", "hmac_key", "global_configuration", "version", "created_at", "updated_at"],
};
export const toRunTaskRow = (r: RunTaskRecord): RunTaskRow => ({
  id: r.id,
  organization: r.organization,
  name: r.name,
  url: r.url,
  description: r.description,
  category: r.category,
  enabled: bool(r.enabled),
  hmac_key: r.hmacKey,
  global_configuration: json(r.globalConfiguration),
  version: r.version,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});
export const fromRunTaskRow = (row: RunTaskRow): RunTaskRecord => ({
  id: row.id,
  organization: row.organization,
  name: row.name,
  url: row.url,
  description: row.description,
  category: row.category as RunTaskCategory,
  enabled: row.enabled === 1,
  hmacKey: row.hmac_key,
  globalConfiguration: parse<GlobalConfiguration>(row.global_configuration),
  version: row.version,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface WorkspaceTaskRow {
  id: string;
  workspace_id: string;
  organization: string;
  task_id: string;
  enforcement_level: string;
  stages: string;
  version: number;
  created_at: string;
  updated_at: string;
}
export const WORKSPACE_TASKS: TableColumns<WorkspaceTaskRow> = {
  table: "workspace_tasks",
  columns: ["id", "workspace_id", "organization", "task_id", "enforcement_level", "stages", "version", "created_at", "updated_at"],
};
export const toWorkspaceTaskRow = (r: WorkspaceTaskRecord): WorkspaceTaskRow => ({
  id: r.id,
  workspace_id: r.workspaceId,
  organization: r.organization,
  task_id: r.taskId,
  enforcement_level: r.enforcementLevel,
  stages: json(r.stages),
  version: r.version,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});
export const fromWorkspaceTaskRow = (row: WorkspaceTaskRow): WorkspaceTaskRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  organization: row.organization,
  taskId: row.task_id,
  enforcementLevel: row.enforcement_level as EnforcementLevel,
  stages: parse<RunStage[]>(row.stages),
  version: row.version,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface RunRow {
  id: string;
  organization: string;
  workspace_id: string;
  message: string;
  created_by: string;
  created_at: string;
  is_speculative: number;
  configuration_version_id: string;
  configuration_version_downloadable: number;
  plan_id: string;
  apply_id: string;
  vcs: string | null;
}
export const RUNS: TableColumns<RunRow> = {
  table: "runs",
  columns: [
    "id",
    "organization",
    "workspace_id",
    "message",
    "created_by",
    "created_at",
    "is_speculative",
    "configuration_version_id",
    "configuration_version_downloadable",
    "plan_id",
    "apply_id",
    "vcs",
  ],
};
export const toRunRow = (r: RunRecord): RunRow => ({
  id: r.id,
  organization: r.organization,
  workspace_id: r.workspaceId,
  message: r.message,
  created_by: r.createdBy,
  created_at: r.createdAt,
  is_speculative: bool(r.isSpeculative),
  configuration_version_id: r.configurationVersionId,
  configuration_version_downloadable: bool(r.configurationVersionDownloadable),
  plan_id: r.planId,
  apply_id: r.applyId,
  vcs: r.vcs === null ? null : json(r.vcs),
});
export const fromRunRow = (row: RunRow): RunRecord => ({
  id: row.id,
  organization: row.organization,
  workspaceId: row.workspace_id,
  message: row.message,
  createdBy: row.created_by,
  createdAt: row.created_at,
  isSpeculative: row.is_speculative === 1,
  configurationVersionId: row.configuration_version_id,
  configurationVersionDownloadable: row.configuration_version_downloadable === 1,
  planId: row.plan_id,
  applyId: row.apply_id,
  vcs: row.vcs === null ? null : parse<RunVcs>(row.vcs),
});

export interface TaskStageRow {
  id: string;
  run_id: string;
  workspace_id: string;
  organization: string;
  stage: string;
  sequence: number;
  status: string;
  status_timestamps: string;
  overridden: number;
  override_comment: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}
export const TASK_STAGES: TableColumns<TaskStageRow> = {
  table: "task_stages",
  columns: [
    "id",
    "run_id",
    "workspace_id",
    "organization",
    "stage",
    "sequence",
    "status",
    "status_timestamps",
    "overridden",
    "override_comment",
    "version",
    "created_at",
    "updated_at",
  ],
};
/** The columns a stage's state changes write (the others are fixed when the run is created). */
export const TASK_STAGE_STATE: readonly (keyof TaskStageRow)[] = ["status", "status_timestamps", "overridden", "override_comment", "version", "updated_at"];
export const toTaskStageRow = (r: TaskStageRecord): TaskStageRow => ({
  id: r.id,
  run_id: r.runId,
  workspace_id: r.workspaceId,
  organization: r.organization,
  stage: r.stage,
  sequence: r.sequence,
  status: r.status,
  status_timestamps: json(r.statusTimestamps),
  overridden: bool(r.overridden),
  override_comment: r.overrideComment,
  version: r.version,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});
export const fromTaskStageRow = (row: TaskStageRow): TaskStageRecord => ({
  id: row.id,
  runId: row.run_id,
  workspaceId: row.workspace_id,
  organization: row.organization,
  stage: row.stage as RunStage,
  sequence: row.sequence,
  status: row.status as StageStatus,
  statusTimestamps: parse<StatusTimestampMap>(row.status_timestamps),
  overridden: row.overridden === 1,
  overrideComment: row.override_comment,
  version: row.version,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface TaskResultRow {
  id: string;
  stage_id: string;
  run_id: string;
  workspace_id: string;
  organization: string;
  stage: string;
  position: number;
  status: string;
  message: string | null;
  url: string | null;
  status_timestamps: string;
  task_id: string;
  task_name: string;
  task_url: string;
  workspace_task_id: string;
  enforcement_level: string;
  is_speculative: number;
  outcomes_count: number;
  access_token_digest: string | null;
  deadline_at: string | null;
  deadline_max_at: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}
export const TASK_RESULTS: TableColumns<TaskResultRow> = {
  table: "task_results",
  columns: [
    "id",
    "stage_id",
    "run_id",
    "workspace_id",
    "organization",
    "stage",
    "position",
    "status",
    "message",
    "url",
    "status_timestamps",
    "task_id",
    "task_name",
    "task_url",
    "workspace_task_id",
    "enforcement_level",
    "is_speculative",
    "outcomes_count",
    "access_token_digest",
    "deadline_at",
    "deadline_max_at",
    "version",
    "created_at",
    "updated_at",
  ],
};
/** The columns a result's state changes write (the others are fixed when the run is created). */
export const TASK_RESULT_STATE: readonly (keyof TaskResultRow)[] = [
  "status",
  "message",
  "url",
  "status_timestamps",
  "outcomes_count",
  "access_token_digest",
  "deadline_at",
  "deadline_max_at",
  "version",
  "updated_at",
];
/** What `TaskStageStore.start` changes of a result: its callback token (D17). */
export const TASK_RESULT_START: readonly (keyof TaskResultRow)[] = ["access_token_digest", "version", "updated_at"];
export const toTaskResultRow = (r: TaskResultRecord): TaskResultRow => ({
  id: r.id,
  stage_id: r.stageId,
  run_id: r.runId,
  workspace_id: r.workspaceId,
  organization: r.organization,
  stage: r.stage,
  position: r.position,
  status: r.status,
  message: r.message,
  url: r.url,
  status_timestamps: json(r.statusTimestamps),
  task_id: r.taskId,
  task_name: r.taskName,
  task_url: r.taskUrl,
  workspace_task_id: r.workspaceTaskId,
  enforcement_level: r.enforcementLevel,
  is_speculative: bool(r.isSpeculative),
  outcomes_count: r.outcomesCount,
  access_token_digest: r.accessTokenDigest,
  deadline_at: r.deadlineAt,
  deadline_max_at: r.deadlineMaxAt,
  version: r.version,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});
export const fromTaskResultRow = (row: TaskResultRow): TaskResultRecord => ({
  id: row.id,
  stageId: row.stage_id,
  runId: row.run_id,
  workspaceId: row.workspace_id,
  organization: row.organization,
  stage: row.stage as RunStage,
  position: row.position,
  status: row.status as ResultStatus,
  message: row.message,
  url: row.url,
  statusTimestamps: parse<StatusTimestampMap>(row.status_timestamps),
  taskId: row.task_id,
  taskName: row.task_name,
  taskUrl: row.task_url,
  workspaceTaskId: row.workspace_task_id,
  enforcementLevel: row.enforcement_level as EnforcementLevel,
  isSpeculative: row.is_speculative === 1,
  outcomesCount: row.outcomes_count,
  accessTokenDigest: row.access_token_digest,
  deadlineAt: row.deadline_at,
  deadlineMaxAt: row.deadline_max_at,
  version: row.version,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface OutcomeRow {
  id: string;
  task_result_id: string;
  position: number;
  outcome_id: string;
  description: string;
  body: string | null;
  url: string | null;
  tags: string;
  severity_label: string | null;
  severity_rank: number;
  status_label: string | null;
  created_at: string;
}
export const OUTCOMES: TableColumns<OutcomeRow> = {
  table: "task_result_outcomes",
  columns: [
    "id",
    "task_result_id",
    "position",
    "outcome_id",
    "description",
    "body",
    "url",
    "tags",
    "severity_label",
    "severity_rank",
    "status_label",
    "created_at",
  ],
};
export const toOutcomeRow = (r: TaskResultOutcomeRecord): OutcomeRow => ({
  id: r.id,
  task_result_id: r.taskResultId,
  position: r.position,
  outcome_id: r.outcomeId,
  description: r.description,
  body: r.body,
  url: r.url,
  tags: json(r.tags),
  severity_label: r.severityLabel,
  severity_rank: r.severityRank,
  status_label: r.statusLabel,
  created_at: r.createdAt,
});
export const fromOutcomeRow = (row: OutcomeRow): TaskResultOutcomeRecord => ({
  id: row.id,
  taskResultId: row.task_result_id,
  position: row.position,
  outcomeId: row.outcome_id,
  description: row.description,
  body: row.body,
  url: row.url,
  tags: parse<Tags>(row.tags),
  severityLabel: row.severity_label,
  severityRank: row.severity_rank,
  statusLabel: row.status_label,
  createdAt: row.created_at,
});

/**
 * A `task_deliveries` row joined with its payload. The payload lives in `task_delivery_payloads`
 * (migration 0009), written once: claims and settles rewrite only the small outbox row.
 */
export interface DeliveryRow {
  id: string;
  task_result_id: string;
  stage_id: string;
  run_id: string;
  task_id: string;
  stage: string;
  url: string;
  attempt: number;
  due_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
  fencing_token: number;
  payload: string;
  created_at: string;
  delivered_at: string | null;
  closed_at: string | null;
  last_error: string | null;
}
export const DELIVERIES: TableColumns<Omit<DeliveryRow, "payload">> = {
  table: "task_deliveries",
  columns: [
    "id",
    "task_result_id",
    "stage_id",
    "run_id",
    "task_id",
    "stage",
    "url",
    "attempt",
    "due_at",
    "lease_owner",
    "lease_expires_at",
    "fencing_token",
    "created_at",
    "delivered_at",
    "closed_at",
    "last_error",
  ],
};
export const toDeliveryRow = (r: TaskDeliveryRecord): Omit<DeliveryRow, "payload"> => ({
  id: r.id,
  task_result_id: r.taskResultId,
  stage_id: r.stageId,
  run_id: r.runId,
  task_id: r.taskId,
  stage: r.stage,
  url: r.url,
  attempt: r.attempt,
  due_at: r.dueAt,
  lease_owner: r.leaseOwner,
  lease_expires_at: r.leaseExpiresAt,
  fencing_token: r.fencingToken,
  created_at: r.createdAt,
  delivered_at: r.deliveredAt,
  closed_at: r.closedAt,
  last_error: r.lastError,
});
export const fromDeliveryRow = (row: DeliveryRow): TaskDeliveryRecord => ({
  id: row.id,
  taskResultId: row.task_result_id,
  stageId: row.stage_id,
  runId: row.run_id,
  taskId: row.task_id,
  stage: row.stage as RunStage,
  url: row.url,
  attempt: row.attempt,
  dueAt: row.due_at,
  leaseOwner: row.lease_owner,
  leaseExpiresAt: row.lease_expires_at,
  fencingToken: row.fencing_token,
  payload: row.payload,
  createdAt: row.created_at,
  deliveredAt: row.delivered_at,
  closedAt: row.closed_at,
  lastError: row.last_error,
});
