import type { RunRecord } from "../schemas/run-task-records.js";
import type { RunArtifactKind } from "../storage/run-tasks-types.js";
import type { ServiceContext } from "./context.js";
import { createRunTaskConfig } from "./run-task-config.js";
import { createRunTaskEmitter } from "./run-task-events.js";
import { resolveRunTaskSettings } from "./run-task-settings.js";
import { createTaskCallbackService } from "./task-callback.js";
import { createDeliveryStatusReader } from "./delivery-status.js";
import { createFreshPayloads } from "./fresh-payloads.js";
import { createTaskDeliveryService } from "./task-deliveries.js";
import { createTaskStageService } from "./task-stages.js";
import { readAgentFacts, readAgentNames, type ResultAgentFacts } from "./pool-presence.js";
import type { TaskResultView } from "../schemas/task-stage-views.js";

/** How many runs naming one artifact id a reader's credential is tried against (ids may repeat across organizations). */
export const ARTIFACT_CANDIDATES = 20;

/**
 * Run tasks (spec 1-4.3, decisions D11, D13-D18): configuration, runs and their task stages and
 * results, the callback, the override, outcomes, and status events. Unchecked: the HTTP routes
 * authorize before calling; the host's own code is trusted.
 */
/** decision D34: a pool result's pool and agent (null for a direct result), and agents' names by id. */
const agentReads = (ctx: ServiceContext) => ({
  agentFacts: (result: Pick<TaskResultView, "id" | "status" | "agentPoolId">): Promise<ResultAgentFacts | null> => readAgentFacts(ctx.storage, result, ctx.now()),
  agentNames: (ids: readonly string[]): Promise<Record<string, string>> => readAgentNames(ctx.storage, ids),
});

export function createRunTaskService(ctx: ServiceContext) {
  const settings = ctx.runTasks ?? resolveRunTaskSettings({});
  const events = createRunTaskEmitter(ctx.logger, ctx.storage.changes);
  const config = createRunTaskConfig(ctx);
  // The texts this instance enqueues go to its own dispatcher's first attempts unsealed.
  const fresh = createFreshPayloads({ now: () => ctx.now().getTime() });
  const stages = createTaskStageService(ctx, settings, events, fresh);
  const callbacks = createTaskCallbackService(ctx, settings, stages);
  const deliveries = createTaskDeliveryService(ctx, settings, stages, { fresh });
  return {
    settings,
    /** Organization run tasks (type `tasks`): `list`, `get`, `create`, `update`, `delete`, `reencrypt`. */
    tasks: config.tasks,
    /** Workspace run tasks (type `workspace-tasks`): `list`, `get`, `create`, `update`, `delete`. */
    workspaceTasks: config.workspaceTasks,
    createRun: stages.createRun,
    startStage: stages.startStage,
    cancelRun: stages.cancelRun,
    endRun: stages.endRun,
    override: stages.override,
    getStage: stages.getStage,
    getStageById: stages.getStageById,
    listStages: stages.listStages,
    listResults: stages.listResults,
    getResult: stages.getResult,
    getRun: stages.getRun,
    /** decision D24: the newest run with this plan or configuration version id (null when the storage cannot look it up). */
    findRunByArtifact: async (kind: RunArtifactKind, id: string): Promise<RunRecord | null> =>
      (await ctx.storage.runs.findByArtifact?.(kind, id)) ?? null,
    /**
     * The newest runs (at most ARTIFACT_CANDIDATES) naming this plan, apply or
     * configuration version id, for a reader to take the first it may read; bounded, so an id
     * shared by many runs costs a fixed amount per request.
     */
    findRunsByArtifact: async (kind: RunArtifactKind, id: string): Promise<RunRecord[]> => {
      if (ctx.storage.runs.listByArtifact) return ctx.storage.runs.listByArtifact(kind, id, ARTIFACT_CANDIDATES);
      const newest = (await ctx.storage.runs.findByArtifact?.(kind, id)) ?? null;
      return newest ? [newest] : [];
    },
    listRuns: stages.listRuns,
    callback: callbacks.callback,
    receiveCallback: callbacks.receiveCallback,
    verifyAccessToken: callbacks.verifyAccessToken,
    listOutcomes: callbacks.listOutcomes,
    getOutcome: callbacks.getOutcome,
    /** decision D31: a result's delivery attempts, newest first (the newest 20 are kept). */
    listDeliveryAttempts: deliveries.attempts.list,
    /**
     * decision D31: the next attempt of a retrying result now, inside D16's deadline; 409 when the
     * result is final, past its deadline, not being retried, or has an attempt under way.
     */
    retryDelivery: deliveries.attempts.retryNow,
    /**
     * decision D31: where a result's request stands (attempts made, next due time, deadline, an
     * attempt under way, delivered), for pages that word a failing integration; null when no result.
     */
    deliveryStatus: createDeliveryStatusReader(ctx),
    ...agentReads(ctx),
    /**
     * Subscribes to `stage-status` or `result-status`; returns an unsubscribe function. With a
     * storage shared by several processes (`Storage.changes`, decision D27) listeners also hear
     * the changes the other processes store, each once.
     */
    on: events.on,
    /** Like `on`, but only this instance's own changes: it never listens to other processes. */
    onOwn: events.onOwn,
    /**
     * Resolves true once `on` listeners hear the changes other processes store (D27), false when
     * the storage offers no such feed (memory and SQLite serve one process), when no listener is
     * registered, or while the feed cannot be reached (it is retried).
     */
    listening: events.listening,
    /** Stops hearing other processes; `runplane.close()` calls it. */
    close: events.close,
    /**
     * The delivery outbox (D15, D16) as steps: `claim`, `prepare`, `succeed`, `fail`, `release`,
     * `listExpired`, `expire`, `listUnsettledStages`, `settle`. `createDispatcher` drives them.
     */
    deliveries,
  };
}
export type RunTaskService = ReturnType<typeof createRunTaskService>;
