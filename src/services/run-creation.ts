import { ApiError, conflict } from "../errors.js";
import { CreateRunSchema, type CreateRunInput } from "../schemas/run-task-config.js";
import type { RunRecord, TaskResultRecord, TaskStageRecord, WorkspaceTaskRecord } from "../schemas/run-task-records.js";
import { RUN_STAGES, type RunStage } from "../schemas/run-tasks.js";
import { toStageView, type TaskStageView } from "../schemas/task-stage-views.js";
import type { Workspace } from "../schemas/directory.js";
import { isoNow, type ServiceContext } from "./context.js";
import { parseOrThrow } from "./validate.js";

type CreateRunRequest = ReturnType<typeof CreateRunSchema.parse>;

interface Attached {
  ws: WorkspaceTaskRecord;
  name: string;
  url: string;
  /** decision D34: refreshed when the stage starts. */
  agentPoolId: string | null;
}

export interface CreatedRun {
  run: RunRecord;
  stages: TaskStageView[];
  /** False when the run already existed: nothing was written (createRun is idempotent per id). */
  created: boolean;
}

const missingWorkspace = (id: string): string =>
  `workspace ${id} is not in the directory; create it with runplane.directory.workspaces.create({ id: "${id}", name, organization, projectId }) before its runs`;

/**
 * Why `startStage(runId, stage)` found no stage to start. Only the host calls it (no route does),
 * so naming the run and its workspace leaks nothing across organizations (D4).
 */
export const missingStage = (runId: string, stage: RunStage, run: RunRecord | null): string =>
  run
    ? `run ${runId} has no ${stage} task stage: no enabled run task was attached to workspace ${run.workspaceId} for ${stage} when the run was created (attach one with runplane.runTasks.workspaceTasks.create; a run keeps the stages it was created with)`
    : `run ${runId} does not exist; create it with runplane.runTasks.createRun before starting its stages`;

/** A new run of `workspace` (its VCS settings unless the host gave its own). */
function newRun(id: string, req: CreateRunRequest, workspace: Workspace, now: string, newId: ServiceContext["newId"]): RunRecord {
  return {
    id,
    organization: workspace.organization,
    workspaceId: workspace.id,
    message: req.message,
    createdBy: req.createdBy,
    createdAt: now,
    isSpeculative: req.isSpeculative,
    configurationVersionId: req.configurationVersionId,
    configurationVersionDownloadable: req.configurationVersionDownloadable,
    planId: req.planId ?? newId("plan"),
    applyId: req.applyId ?? newId("apply"),
    vcs:
      req.vcs ??
      (workspace.vcsRepoUrl === null ? null : { branch: workspace.vcsBranch, repoUrl: workspace.vcsRepoUrl, commitUrl: null, commitHash: null, pullRequestUrl: null }),
  };
}

/** A pending stage of a new run. */
function newStage(id: string, runId: string, workspace: Workspace, stage: RunStage, now: string): TaskStageRecord {
  return {
    id,
    runId,
    workspaceId: workspace.id,
    organization: workspace.organization,
    stage,
    sequence: RUN_STAGES.indexOf(stage),
    status: "pending",
    statusTimestamps: {},
    overridden: false,
    overrideComment: null,
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/** A pending result of a new stage: the attached task as it is now (name, URL, enforcement level). */
function newResult(id: string, stage: TaskStageRecord, t: Attached, position: number, isSpeculative: boolean, now: string): TaskResultRecord {
  return {
    id,
    stageId: stage.id,
    runId: stage.runId,
    workspaceId: stage.workspaceId,
    organization: stage.organization,
    stage: stage.stage,
    position,
    status: "pending",
    message: null,
    url: null,
    statusTimestamps: {},
    taskId: t.ws.taskId,
    taskName: t.name,
    taskUrl: t.url,
    workspaceTaskId: t.ws.id,
    enforcementLevel: t.ws.enforcementLevel,
    isSpeculative,
    outcomesCount: 0,
    agentPoolId: t.agentPoolId,
    accessTokenDigest: null,
    deadlineAt: null,
    deadlineMaxAt: null,
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/** `runTasks.createRun`: a host's run and the task stages and results it gets (spec 3). */
export function createRunCreator(ctx: ServiceContext) {
  const s = ctx.storage;

  /** Snapshots of the enabled workspace tasks per run stage, in run order (spec 3: stage has tasks). */
  async function plan(workspaceId: string): Promise<{ stage: RunStage; tasks: Attached[] }[]> {
    const { items } = await s.workspaceTasks.list(workspaceId);
    const attached: Attached[] = [];
    for (const ws of items) {
      const task = await s.runTasks.get(ws.taskId);
      if (task && task.enabled && task.organization === ws.organization) attached.push({ ws, name: task.name, url: task.url, agentPoolId: task.agentPoolId ?? null });
    }
    return RUN_STAGES.map((stage) => ({ stage, tasks: attached.filter((t) => t.ws.stages.includes(stage)) })).filter(
      (p) => p.tasks.length > 0,
    );
  }

  const existing = async (id: string, workspaceId: string): Promise<CreatedRun | null> => {
    const run = await s.runs.get(id);
    if (!run) return null;
    if (run.workspaceId !== workspaceId) throw conflict(`run ${id} already exists in another workspace`);
    const { items } = await s.taskStages.listByRun(id);
    return { run, stages: items.map(toStageView), created: false };
  };

  /**
   * Stores a run and, from the workspace's enabled run tasks at this moment, one pending stage per
   * run stage that has tasks, each with one pending result per task (snapshotting name, URL and
   * enforcement level). One atomic storage step; a second call with the same id writes nothing.
   */
  return async function createRun(input: CreateRunInput): Promise<CreatedRun> {
    const req = parseOrThrow(CreateRunSchema, input, "");
    const workspace = await s.workspaces.get(req.workspaceId);
    // Only the host calls createRun (no route does), so naming the missing record leaks nothing.
    if (!workspace) throw new ApiError("not-found", { detail: missingWorkspace(req.workspaceId) });
    const id = req.id ?? ctx.newId("run");
    const before = await existing(id, workspace.id);
    if (before) return before;

    const now = isoNow(ctx);
    const run = newRun(id, req, workspace, now, ctx.newId);
    const stages: TaskStageRecord[] = [];
    const results: TaskResultRecord[] = [];
    for (const { stage, tasks } of await plan(workspace.id)) {
      const stageRecord = newStage(ctx.newId("ts"), id, workspace, stage, now);
      stages.push(stageRecord);
      tasks.forEach((t, position) =>
        results.push(newResult(ctx.newId("taskrs"), stageRecord, t, position, req.isSpeculative, now)),
      );
    }
    if (await s.runs.create(run, stages, results)) return { run, stages: stages.map(toStageView), created: true };
    const raced = await existing(id, workspace.id);
    if (!raced) throw new ApiError("internal");
    return raced;
  };
}
