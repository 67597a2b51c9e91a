import type {
  StatusTimestampMap,
  TaskResultOutcomeRecord,
  TaskResultRecord,
  TaskStageRecord,
} from "../../src/schemas/run-task-records.js";
import type { EnforcementLevel, ResultStatus, RunStage, StageStatus, Tags } from "../../src/schemas/run-tasks.js";
import { bool, json, parse } from "./column-values.js";
import type { TableColumns } from "./statements.js";

/**
 * Row <-> record converters of the stage tables (task stages, task results, outcomes), with the
 * conventions of rows.ts (`./column-values.ts`); each table lists its columns once, for the
 * generated INSERT and UPDATE.
 */

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
  /** Decision D34 (migration `agents`). */
  agent_pool_id: string | null;
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
    "agent_pool_id",
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
/** What `TaskStageStore.start` changes of a result: its callback token (D17) and agent pool (D34). */
export const TASK_RESULT_START: readonly (keyof TaskResultRow)[] = ["access_token_digest", "agent_pool_id", "deadline_at", "deadline_max_at", "version", "updated_at"];
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
  agent_pool_id: r.agentPoolId ?? null,
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
  agentPoolId: row.agent_pool_id,
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
