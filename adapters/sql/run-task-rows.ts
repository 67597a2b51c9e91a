import type {
  GlobalConfiguration,
  RunRecord,
  RunTaskCategory,
  RunTaskRecord,
  RunVcs,
  WorkspaceTaskRecord,
} from "../../src/schemas/run-task-records.js";
import type { EnforcementLevel, RunStage } from "../../src/schemas/run-tasks.js";
import { bool, json, parse } from "./column-values.js";
import type { TableColumns } from "./statements.js";

/**
 * Row <-> record converters of the run task tables (migration `run-tasks` of either adapter): run
 * tasks, workspace tasks and runs here, stages and results in stage-rows.ts, the outbox in
 * delivery-rows.ts. The conventions of rows.ts hold: booleans as 0/1, arrays and maps as JSON
 * text, enums cast (the core validated them). Each table also lists its columns once, for the
 * generated INSERT and UPDATE.
 */

export { fromTaskResultRow, fromTaskStageRow, fromOutcomeRow, OUTCOMES, TASK_RESULT_START, TASK_RESULT_STATE, TASK_RESULTS, TASK_STAGE_STATE, TASK_STAGES, toOutcomeRow, toTaskResultRow, toTaskStageRow } from "./stage-rows.js";
export type { OutcomeRow, TaskResultRow, TaskStageRow } from "./stage-rows.js";
export { DELIVERIES, fromDeliveryRow, toDeliveryRow } from "./delivery-rows.js";
export type { DeliveryRow } from "./delivery-rows.js";

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
  /** Decision D34; null for a task the platform delivers itself (migration `agents`). */
  agent_pool_id: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}
export const RUN_TASKS: TableColumns<RunTaskRow> = {
  table: "run_tasks",
  columns: ["id", "organization", "name", "url", "description", "category", "enabled", "hmac_key", "global_configuration", "agent_pool_id", "version", "created_at", "updated_at"],
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
  agent_pool_id: r.agentPoolId ?? null,
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
  agentPoolId: row.agent_pool_id,
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
