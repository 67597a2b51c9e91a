import type { TaskResultRecord, TaskStageRecord } from "../schemas/run-task-records.js";
import type { ServiceContext } from "./context.js";
import type { RunTaskEmitter } from "./run-task-events.js";
import { createStageTelemetry } from "./stage-telemetry.js";
import { GLOBAL_TELEMETRY } from "../telemetry/providers.js";

/** What a result status event needs of the result before and after its change. */
export type ResultState = Pick<TaskResultRecord, "id" | "stageId" | "runId" | "stage" | "status" | "updatedAt">;

/** The stage and result status events, fired after the write that changed the status (and counted). */
export function createStageEmitters(ctx: ServiceContext, events: RunTaskEmitter) {
  const telemetry = createStageTelemetry(ctx.logger, ctx.telemetry ?? GLOBAL_TELEMETRY);
  return {
    emitStage(before: TaskStageRecord, after: TaskStageRecord): void {
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
    },
    emitResult(before: ResultState, after: ResultState): void {
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
    },
  };
}
export type StageEmitters = ReturnType<typeof createStageEmitters>;
