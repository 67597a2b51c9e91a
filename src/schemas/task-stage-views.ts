import type {
  RunRecord,
  StatusTimestampMap,
  TaskResultOutcomeRecord,
  TaskResultRecord,
  TaskStageRecord,
} from "./run-task-records.js";
import type { EnforcementLevel, ResultStatus, RunStage, StageStatus, Tags } from "./run-tasks.js";

/**
 * What the programmatic API and the routes see of stages, results and outcomes: the records
 * without their storage internals (versions, token digests, deadlines).
 */
export interface TaskStageView {
  id: string;
  runId: string;
  workspaceId: string;
  organization: string;
  stage: RunStage;
  status: StageStatus;
  statusTimestamps: StatusTimestampMap;
  /** Whether a user overrode the stage's failed mandatory tasks (D13). */
  overridden: boolean;
  /** The override's comment, if it had one (a run event tells it). */
  overrideComment: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface TaskResultView {
  id: string;
  stageId: string;
  runId: string;
  workspaceId: string;
  organization: string;
  stage: RunStage;
  status: ResultStatus;
  message: string | null;
  url: string | null;
  statusTimestamps: StatusTimestampMap;
  taskId: string;
  taskName: string;
  taskUrl: string;
  workspaceTaskId: string;
  enforcementLevel: EnforcementLevel;
  isSpeculative: boolean;
  outcomesCount: number;
  /** decision D34: the pool of the task when its stage started, or null (wire `agent-pool-id`). */
  agentPoolId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface OutcomeView {
  id: string;
  taskResultId: string;
  outcomeId: string;
  description: string;
  body: string | null;
  url: string | null;
  /** Write form, as the integration sent it; the routes write the read form (D18). */
  tags: Tags;
  createdAt: string;
}

export type RunView = RunRecord;

export const toStageView = (r: TaskStageRecord): TaskStageView => ({
  id: r.id,
  runId: r.runId,
  workspaceId: r.workspaceId,
  organization: r.organization,
  stage: r.stage,
  status: r.status,
  statusTimestamps: r.statusTimestamps,
  overridden: r.overridden,
  overrideComment: r.overrideComment,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export const toResultView = (r: TaskResultRecord): TaskResultView => ({
  id: r.id,
  stageId: r.stageId,
  runId: r.runId,
  workspaceId: r.workspaceId,
  organization: r.organization,
  stage: r.stage,
  status: r.status,
  message: r.message,
  url: r.url,
  statusTimestamps: r.statusTimestamps,
  taskId: r.taskId,
  taskName: r.taskName,
  taskUrl: r.taskUrl,
  workspaceTaskId: r.workspaceTaskId,
  enforcementLevel: r.enforcementLevel,
  isSpeculative: r.isSpeculative,
  outcomesCount: r.outcomesCount,
  agentPoolId: r.agentPoolId ?? null,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export const toOutcomeView = (r: TaskResultOutcomeRecord): OutcomeView => ({
  id: r.id,
  taskResultId: r.taskResultId,
  outcomeId: r.outcomeId,
  description: r.description,
  body: r.body,
  url: r.url,
  tags: r.tags,
  createdAt: r.createdAt,
});
