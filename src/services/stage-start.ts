import { randomSecret, sha256Hex } from "../crypto/random.js";
import { transitionStage } from "../domain/stage-machine.js";
import { ApiError, conflict, notFound } from "../errors.js";
import type { TaskDeliveryRecord, TaskResultRecord, TaskStageRecord } from "../schemas/run-task-records.js";
import type { RunStage } from "../schemas/run-tasks.js";
import { toStageView, type TaskStageView } from "../schemas/task-stage-views.js";
import type { GuardedResultWrite } from "../storage/types.js";
import type { ServiceContext } from "./context.js";
import { deliveryBuilder } from "./delivery-builder.js";
import type { FreshPayloads } from "./fresh-payloads.js";
import { missingStage } from "./run-creation.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import type { StageEmitters } from "./stage-events.js";
import { advance } from "./stage-transitions.js";

/**
 * decision D34: a result goes the way its task goes when the stage starts: the task's agent pool
 * now, or the pool it had when the run was created if the task is gone. The stage's tasks are read
 * in one step (D57: one statement however many results), or one read per task from a storage
 * without `getMany`.
 */
async function taskPools(ctx: ServiceContext, results: readonly TaskResultRecord[]): Promise<(result: TaskResultRecord) => string | null> {
  const ids = [...new Set(results.map((r) => r.taskId))];
  const store = ctx.storage.runTasks;
  const tasks = store.getMany ? await store.getMany(ids) : (await Promise.all(ids.map((id) => store.get(id)))).filter((t) => t !== null);
  const pools = new Map(tasks.map((t) => [t.id, t.agentPoolId ?? null]));
  return (result) => (pools.has(result.taskId) ? pools.get(result.taskId)! : (result.agentPoolId ?? null));
}

/**
 * decision D34 and D16: a pool's result opens its deadline window when its stage starts, not at
 * its first attempt: with no agent of the pool connected no attempt would ever start, and the run
 * would wait forever. With one connected the first attempt follows at once, as a direct one does.
 */
function poolWindow(settings: RunTaskSettings, now: Date): Pick<TaskResultRecord, "deadlineAt" | "deadlineMaxAt"> {
  const rule = settings.deadline;
  const [ms, maxMs] = rule.kind === "fixed" ? [rule.ms, null] : [rule.idleMs, rule.maxMs];
  const at = (plus: number): string => new Date(now.getTime() + plus).toISOString();
  return { deadlineAt: at(ms), deadlineMaxAt: maxMs === null ? null : at(maxMs) };
}

/**
 * `pending -> running` (D13) in one storage step that also issues each result its callback
 * access token (stored as a digest, D17) and enqueues its delivery (D15). The deadline (D16)
 * is not set here for a direct task: it starts at the first delivery attempt (a pool's task: here). 404 for an unknown run or stage;
 * 409 `transition not allowed` when not pending.
 */
export function createStageStart(ctx: ServiceContext, settings: RunTaskSettings, emit: StageEmitters, fresh?: FreshPayloads) {
  const s = ctx.storage;
  return async function startStage(runId: string, stage: RunStage): Promise<TaskStageView> {
    const current = await s.taskStages.getByRun(runId, stage);
    const run = await s.runs.get(runId);
    if (!current || !run) throw new ApiError("not-found", { detail: missingStage(runId, stage, run) });
    const now = ctx.now();
    const t = transitionStage(current, { type: "start" }, now);
    if (!t.ok) throw conflict("transition not allowed");
    const workspace = await s.workspaces.get(run.workspaceId);
    if (!workspace) throw notFound();

    const writes: GuardedResultWrite[] = [];
    const built: { row: TaskDeliveryRecord; text: string }[] = [];
    const build = deliveryBuilder(ctx, settings, run, stage, workspace, now);
    const results = await s.taskResults.listByStage(current.id);
    const poolOf = await taskPools(ctx, results);
    const opened = poolWindow(settings, now);
    const updatedAt = now.toISOString();
    for (const result of results) {
      const token = randomSecret();
      const agentPoolId = poolOf(result);
      const next: TaskResultRecord = {
        ...result,
        agentPoolId,
        ...(agentPoolId !== null && result.deadlineAt === null ? opened : {}),
        accessTokenDigest: sha256Hex(token),
        version: result.version + 1,
        updatedAt,
      };
      writes.push({ next, expected: { statuses: ["pending"], version: result.version } });
      built.push(build(next, token));
    }
    const next: TaskStageRecord = advance(current, t, now);
    const rows = built.map((b) => b.row);
    const stored = await s.taskStages.start(next, { statuses: ["pending"], version: current.version }, writes, rows);
    if (!stored) throw conflict("transition not allowed");
    fresh?.keep(built.map(({ row, text }) => ({ id: row.id, text })));
    emit.emitStage(current, stored);
    return toStageView(stored);
  };
}
