import { transitionStage } from "../domain/stage-machine.js";
import { ApiError, conflict, notFound } from "../errors.js";
import type { Page, PageRequest } from "../schemas/records.js";
import type { RunRecord, TaskStageRecord } from "../schemas/run-task-records.js";
import type { RunStage } from "../schemas/run-tasks.js";
import { toResultView, toStageView, type TaskResultView, type TaskStageView } from "../schemas/task-stage-views.js";
import type { ServiceContext } from "./context.js";
import { audited } from "./audit.js";
import type { FreshPayloads } from "./fresh-payloads.js";
import { createRunCreator } from "./run-creation.js";
import type { RunTaskEmitter } from "./run-task-events.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import { createStageEmitters } from "./stage-events.js";
import { createStageStart } from "./stage-start.js";
import { createStageTransitions, MAX_ATTEMPTS } from "./stage-transitions.js";

const NOT_ALLOWED = (): ApiError => conflict("transition not allowed");

export { deliveryPayloadBinding } from "./delivery-builder.js";
export type { CreatedRun } from "./run-creation.js";

/** How a run ends: canceled by the host, or ended (D13, D47); each answers the run's stages as they are then. */
function runEnds(ctx: ServiceContext, cancelStage: (stageId: string) => Promise<void>, notReached: (stageId: string) => Promise<void>) {
  const s = ctx.storage;
  /** Applies `step` to each stage of an existing run (404 otherwise). */
  const endWith = async (runId: string, step: (stage: TaskStageRecord) => Promise<void>): Promise<TaskStageView[]> => {
    if (!(await s.runs.get(runId))) throw notFound();
    for (const stage of (await s.taskStages.listByRun(runId)).items) await step(stage);
    return (await s.taskStages.listByRun(runId)).items.map(toStageView);
  };
  return {
    /** Cancels every unfinished stage of the run and their unfinished results (D13). */
    cancelRun: (runId: string): Promise<TaskStageView[]> => endWith(runId, (stage) => cancelStage(stage.id)),
    /**
     * decision D47: the host's run ended (errored, discarded, planned and finished, applied): every
     * stage it never started is `unreachable` now, its results too, so none waits for ever and a
     * post_apply stage never runs on a run that was never applied. Stages already started go on to
     * their own end. Idempotent; 404 for an unknown run.
     */
    endRun: (runId: string): Promise<TaskStageView[]> => endWith(runId, async (stage) => (stage.status === "pending" ? notReached(stage.id) : undefined)),
  };
}

/**
 * Runs, their task stages and results (spec 3, decisions D13, D15-D17). Every status change goes
 * through the pure stage machine and one compare-and-set in storage; events fire after the write.
 */
export function createTaskStageService(ctx: ServiceContext, settings: RunTaskSettings, events: RunTaskEmitter, fresh?: FreshPayloads) {
  const s = ctx.storage;
  const emit = createStageEmitters(ctx, events);
  const { recompute, cancelStage, notReached } = createStageTransitions(ctx, settings, emit);

  return {
    recompute,
    createRun: createRunCreator(ctx),
    startStage: createStageStart(ctx, settings, emit, fresh),

    ...runEnds(ctx, cancelStage, notReached),

    /**
     * The override (D13): only from `awaiting_override` (else 409 `transition not allowed`); the
     * stage goes to `running` with its failures no longer blocking, then is recomputed (`passed`).
     * It stamps `overridden-at`, its own time, and keeps the stage's first `running-at` (D36).
     */
    async override(stageId: string, comment?: string | null): Promise<TaskStageView> {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await s.taskStages.get(stageId);
        if (!current) throw notFound();
        const now = ctx.now();
        const t = transitionStage(current, { type: "override" }, now);
        if (!t.ok) throw NOT_ALLOWED();
        const next: TaskStageRecord = {
          ...current,
          status: t.status,
          statusTimestamps: t.statusTimestamps,
          overridden: true,
          overrideComment: comment ?? null,
          version: current.version + 1,
          updatedAt: now.toISOString(),
        };
        // decision D53: the override is recorded with the stage's change, in its transaction.
        const draft = {
          organization: current.organization,
          resource: { type: "task-stage", id: stageId },
          action: "override",
          changes: [{ field: "status", old: current.status, new: t.status }, { field: "comment", new: next.overrideComment }, { field: "run", new: current.runId }],
        };
        const stored = await audited(ctx, draft, () => s.taskStages.transition(stageId, { statuses: [current.status], version: current.version }, next));
        if (!stored) continue;
        emit.emitStage(current, stored);
        return toStageView((await recompute(stageId)) ?? stored);
      }
      throw NOT_ALLOWED();
    },

    async getStage(runId: string, stage: RunStage): Promise<TaskStageView | null> {
      const row = await s.taskStages.getByRun(runId, stage);
      return row ? toStageView(row) : null;
    },
    async getStageById(id: string): Promise<TaskStageView | null> {
      const row = await s.taskStages.get(id);
      return row ? toStageView(row) : null;
    },
    /** Stages of a run in run order; every one without `page`. */
    async listStages(runId: string, page?: PageRequest): Promise<Page<TaskStageView>> {
      const result = await s.taskStages.listByRun(runId, page);
      return { items: result.items.map(toStageView), total: result.total };
    },
    async listResults(stageId: string): Promise<TaskResultView[]> {
      return (await s.taskResults.listByStage(stageId)).map(toResultView);
    },
    async getResult(id: string): Promise<TaskResultView | null> {
      const row = await s.taskResults.get(id);
      return row ? toResultView(row) : null;
    },
    getRun: (id: string): Promise<RunRecord | null> => s.runs.get(id),
    /** Runs of a workspace, newest first (the results page's workspace view, D25). */
    listRuns: (workspaceId: string, page: PageRequest): Promise<Page<RunRecord>> => s.runs.listByWorkspace(workspaceId, page),
    emitResult: emit.emitResult,
  };
}
export type TaskStageService = ReturnType<typeof createTaskStageService>;
