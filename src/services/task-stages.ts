import { randomSecret, sha256Hex } from "../crypto/random.js";
import { isFinalResultStatus, isFinalStageStatus, transitionResult, transitionStage } from "../domain/stage-machine.js";
import { ApiError, conflict, notFound } from "../errors.js";
import type { Page, PageRequest } from "../schemas/records.js";
import type { RunRecord, TaskDeliveryRecord, TaskResultRecord, TaskStageRecord } from "../schemas/run-task-records.js";
import type { RunStage } from "../schemas/run-tasks.js";
import { toResultView, toStageView, type TaskResultView, type TaskStageView } from "../schemas/task-stage-views.js";
import type { GuardedResultWrite } from "../storage/types.js";
import type { ServiceContext } from "./context.js";
import { createRunCreator, missingStage } from "./run-creation.js";
import type { RunTaskEmitter } from "./run-task-events.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import { createStageTelemetry } from "./stage-telemetry.js";
import { deliveryBuilder } from "./delivery-builder.js";
import type { FreshPayloads } from "./fresh-payloads.js";

/** Compare-and-set retries before giving up under extreme contention. */
const MAX_ATTEMPTS = 16;
const NOT_ALLOWED = (): ApiError => conflict("transition not allowed");

export { deliveryPayloadBinding } from "./delivery-builder.js";
export type { CreatedRun } from "./run-creation.js";

/**
 * Runs, their task stages and results (spec 3, decisions D13, D15-D17). Every status change goes
 * through the pure stage machine and one compare-and-set in storage; events fire after the write.
 */
export function createTaskStageService(ctx: ServiceContext, settings: RunTaskSettings, events: RunTaskEmitter, fresh?: FreshPayloads) {
  const s = ctx.storage;
  const telemetry = createStageTelemetry(ctx.logger);

  const emitStage = (before: TaskStageRecord, after: TaskStageRecord): void => {
    if (before.status === after.status) return;
    telemetry.stage(before, after);
    events.emit("stage-status", {
      stageId: after.id,
      runId: after.runId,
      workspaceId: after.workspaceId,
      stage: after.stage,
      from: before.status,
      to: after.status,
      at: after.updatedAt,
    });
  };
  type ResultState = Pick<TaskResultRecord, "id" | "stageId" | "runId" | "stage" | "status" | "updatedAt">;
  const emitResult = (before: ResultState, after: ResultState): void => {
    if (before.status === after.status) return;
    telemetry.result(before, after);
    events.emit("result-status", {
      taskResultId: after.id,
      stageId: after.stageId,
      runId: after.runId,
      stage: after.stage,
      from: before.status,
      to: after.status,
      at: after.updatedAt,
    });
  };

  /** The record after a successful pure transition: new status, timestamps and version. */
  const advance = <R extends TaskStageRecord | TaskResultRecord>(current: R, t: { status: R["status"]; statusTimestamps: R["statusTimestamps"] }, now: Date): R => ({
    ...current,
    status: t.status,
    statusTimestamps: t.statusTimestamps,
    version: current.version + 1,
    updatedAt: now.toISOString(),
  });

  const writeStage = async (current: TaskStageRecord, next: TaskStageRecord): Promise<TaskStageRecord | null> => {
    const stored = await s.taskStages.transition(current.id, { statuses: [current.status], version: current.version }, next);
    if (stored) emitStage(current, stored);
    return stored;
  };
  const writeResult = async (current: TaskResultRecord, next: TaskResultRecord): Promise<TaskResultRecord | null> => {
    const stored = await s.taskResults.transition(current.id, { statuses: [current.status], version: current.version }, next);
    if (stored) emitResult(current, stored);
    return stored;
  };

  /**
   * One status change with compare-and-set retries: load the row, let `step` decide the next record
   * (null: nothing to do), write it guarded by the status and version read. Resolves the stored row,
   * the current one when nothing changed, or null when the row is gone; 409 after MAX_ATTEMPTS.
   */
  async function retrying<R extends TaskStageRecord | TaskResultRecord>(
    what: string,
    load: () => Promise<R | null>,
    step: (current: R, now: Date) => Promise<R | null> | R | null,
    write: (current: R, next: R) => Promise<R | null>,
  ): Promise<R | null> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await load();
      if (!current) return null;
      const next = await step(current, ctx.now());
      if (!next) return current;
      const stored = await write(current, next);
      if (stored) return stored;
    }
    throw new ApiError("conflict", { detail: `The task ${what} is being updated concurrently; retry the request` });
  }

  /**
   * Recomputes a running stage from its results (D13) and stores the answer with a compare-and-set.
   * Results only ever become final, so a stale read can only compute `running`, which writes nothing.
   */
  const recompute = (stageId: string): Promise<TaskStageRecord | null> =>
    retrying(
      "stage",
      () => s.taskStages.get(stageId),
      async (current, now) => {
        const results = await s.taskResults.listByStage(stageId);
        const views = results.map((r) => ({ status: r.status, enforcementLevel: r.enforcementLevel, overridden: current.overridden }));
        const t = transitionStage(current, { type: "result", results: views, overridable: settings.overridableTasks }, now);
        return t.ok && t.changed ? advance(current, t, now) : null;
      },
      writeStage,
    );

  const cancelResult = (id: string): Promise<TaskResultRecord | null> =>
    retrying(
      "result",
      () => s.taskResults.get(id),
      (current, now) => {
        if (isFinalResultStatus(current.status)) return null;
        const t = transitionResult(current, { type: "cancel" }, now);
        return t.ok ? advance(current, t, now) : null;
      },
      writeResult,
    );

  async function cancelStage(stageId: string): Promise<void> {
    await retrying(
      "stage",
      () => s.taskStages.get(stageId),
      (current, now) => {
        if (isFinalStageStatus(current.status)) return null;
        const t = transitionStage(current, { type: "cancel" }, now);
        return t.ok ? advance(current, t, now) : null;
      },
      writeStage,
    );
    // The stage is final first, so a racing callback's recompute can no longer move it.
    for (const result of await s.taskResults.listByStage(stageId)) await cancelResult(result.id);
  }

  return {
    recompute,
    createRun: createRunCreator(ctx),

    /**
     * `pending -> running` (D13) in one storage step that also issues each result its callback
     * access token (stored as a digest, D17) and enqueues its delivery (D15). The deadline (D16)
     * is not set here: it starts at the first delivery attempt. 404 for an unknown run or stage;
     * 409 `transition not allowed` when not pending.
     */
    async startStage(runId: string, stage: RunStage): Promise<TaskStageView> {
      const current = await s.taskStages.getByRun(runId, stage);
      const run = await s.runs.get(runId);
      if (!current || !run) throw new ApiError("not-found", { detail: missingStage(runId, stage, run) });
      const now = ctx.now();
      const t = transitionStage(current, { type: "start" }, now);
      if (!t.ok) throw NOT_ALLOWED();
      const workspace = await s.workspaces.get(run.workspaceId);
      if (!workspace) throw notFound();

      const writes: GuardedResultWrite[] = [];
      const built: { row: TaskDeliveryRecord; text: string }[] = [];
      const build = deliveryBuilder(ctx, settings, run, stage, workspace, now);
      for (const result of await s.taskResults.listByStage(current.id)) {
        const token = randomSecret();
        const next: TaskResultRecord = {
          ...result,
          accessTokenDigest: sha256Hex(token),
          version: result.version + 1,
          updatedAt: now.toISOString(),
        };
        writes.push({ next, expected: { statuses: ["pending"], version: result.version } });
        built.push(build(next, token));
      }
      const next: TaskStageRecord = {
        ...current,
        status: t.status,
        statusTimestamps: t.statusTimestamps,
        version: current.version + 1,
        updatedAt: now.toISOString(),
      };
      const rows = built.map((b) => b.row);
      const stored = await s.taskStages.start(next, { statuses: ["pending"], version: current.version }, writes, rows);
      if (!stored) throw NOT_ALLOWED();
      fresh?.keep(built.map(({ row, text }) => ({ id: row.id, text })));
      emitStage(current, stored);
      return toStageView(stored);
    },

    /** Cancels every unfinished stage of the run and their unfinished results (D13). */
    async cancelRun(runId: string): Promise<TaskStageView[]> {
      if (!(await s.runs.get(runId))) throw notFound();
      const { items } = await s.taskStages.listByRun(runId);
      for (const stage of items) await cancelStage(stage.id);
      return (await s.taskStages.listByRun(runId)).items.map(toStageView);
    },

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
        const stored = await s.taskStages.transition(stageId, { statuses: [current.status], version: current.version }, next);
        if (!stored) continue;
        emitStage(current, stored);
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
    emitResult,
  };
}
export type TaskStageService = ReturnType<typeof createTaskStageService>;
