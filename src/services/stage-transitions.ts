import { isFinalResultStatus, isFinalStageStatus, stopsTheRun, transitionResult, transitionStage } from "../domain/stage-machine.js";
import { RUN_STAGES } from "../schemas/run-tasks.js";
import { ApiError } from "../errors.js";
import type { TaskResultRecord, TaskStageRecord } from "../schemas/run-task-records.js";
import type { ServiceContext } from "./context.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import type { StageEmitters } from "./stage-events.js";

/** Compare-and-set retries before giving up under extreme contention. */
export const MAX_ATTEMPTS = 16;

/** The record after a successful pure transition: new status, timestamps and version. */
export const advance = <R extends TaskStageRecord | TaskResultRecord>(current: R, t: { status: R["status"]; statusTimestamps: R["statusTimestamps"] }, now: Date): R => ({
  ...current,
  status: t.status,
  statusTimestamps: t.statusTimestamps,
  version: current.version + 1,
  updatedAt: now.toISOString(),
});

/**
 * One status change with compare-and-set retries: load the row, let `step` decide the next record
 * (null: nothing to do), write it guarded by the status and version read. Resolves the stored row,
 * the current one when nothing changed, or null when the row is gone; 409 after MAX_ATTEMPTS.
 */
async function retrying<R extends TaskStageRecord | TaskResultRecord>(
  now: () => Date,
  what: string,
  load: () => Promise<R | null>,
  step: (current: R, now: Date) => Promise<R | null> | R | null,
  write: (current: R, next: R) => Promise<R | null>,
): Promise<R | null> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = await load();
    if (!current) return null;
    const next = await step(current, now());
    if (!next) return current;
    const stored = await write(current, next);
    if (stored) return stored;
  }
  throw new ApiError("conflict", { detail: `The task ${what} is being updated concurrently; retry the request` });
}

/** The status changes the stage machine drives on its own (D13): recompute from results, cancel, not reached (D47). */
export function createStageTransitions(ctx: ServiceContext, settings: RunTaskSettings, emit: StageEmitters) {
  const s = ctx.storage;
  const now = (): Date => ctx.now();
  const writeStage = async (current: TaskStageRecord, next: TaskStageRecord): Promise<TaskStageRecord | null> => {
    const stored = await s.taskStages.transition(current.id, { statuses: [current.status], version: current.version }, next);
    if (stored) emit.emitStage(current, stored);
    return stored;
  };
  const writeResult = async (current: TaskResultRecord, next: TaskResultRecord): Promise<TaskResultRecord | null> => {
    const stored = await s.taskResults.transition(current.id, { statuses: [current.status], version: current.version }, next);
    if (stored) emit.emitResult(current, stored);
    return stored;
  };

  const notReachedResult = (id: string): Promise<TaskResultRecord | null> =>
    retrying(now, "result", () => s.taskResults.get(id), (current, at) => {
      const t = transitionResult(current, { type: "not-reached" }, at);
      return t.ok && t.changed ? advance(current, t, at) : null;
    }, writeResult);

  /**
   * decision D47: a stage the run will never reach becomes `unreachable` ("could not be executed"),
   * and so do its results; only from `pending`, so a stage the host started runs to its end.
   */
  async function notReached(stageId: string): Promise<void> {
    const stored = await retrying(now, "stage", () => s.taskStages.get(stageId), (current, at) => {
      const t = transitionStage(current, { type: "not-reached" }, at);
      return t.ok && t.changed ? advance(current, t, at) : null;
    }, writeStage);
    if (stored?.status !== "unreachable") return;
    for (const result of await s.taskResults.listByStage(stageId)) await notReachedResult(result.id);
  }

  /** decision D47: every stage of the run still pending after `after` (in run order) is not reached. */
  async function notReachedAfter(runId: string, after: TaskStageRecord["stage"]): Promise<void> {
    const from = RUN_STAGES.indexOf(after);
    for (const stage of (await s.taskStages.listByRun(runId)).items) {
      if (stage.status === "pending" && RUN_STAGES.indexOf(stage.stage) > from) await notReached(stage.id);
    }
  }

  /**
   * Recomputes a running stage from its results (D13) and stores the answer with a compare-and-set.
   * Results only ever become final, so a stale read can only compute `running`, which writes nothing.
   * decision D47: a stage that ends stopping the run leaves no later stage pending.
   */
  const recompute = async (stageId: string): Promise<TaskStageRecord | null> => {
    const stored = await retrying(now, "stage", () => s.taskStages.get(stageId), async (current, at) => {
      const results = await s.taskResults.listByStage(stageId);
      const views = results.map((r) => ({ status: r.status, enforcementLevel: r.enforcementLevel, overridden: current.overridden }));
      const t = transitionStage(current, { type: "result", results: views, overridable: settings.overridableTasks }, at);
      return t.ok && t.changed ? advance(current, t, at) : null;
    }, writeStage);
    if (stored && stopsTheRun(stored.status)) await notReachedAfter(stored.runId, stored.stage);
    return stored;
  };

  const cancelResult = (id: string): Promise<TaskResultRecord | null> =>
    retrying(now, "result", () => s.taskResults.get(id), (current, at) => {
      if (isFinalResultStatus(current.status)) return null;
      const t = transitionResult(current, { type: "cancel" }, at);
      return t.ok ? advance(current, t, at) : null;
    }, writeResult);

  async function cancelStage(stageId: string): Promise<void> {
    await retrying(now, "stage", () => s.taskStages.get(stageId), (current, at) => {
      if (isFinalStageStatus(current.status)) return null;
      const t = transitionStage(current, { type: "cancel" }, at);
      return t.ok ? advance(current, t, at) : null;
    }, writeStage);
    // The stage is final first, so a racing callback's recompute can no longer move it.
    for (const result of await s.taskResults.listByStage(stageId)) await cancelResult(result.id);
  }

  return { recompute, cancelStage, notReached };
}
