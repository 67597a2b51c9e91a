/**
 * Stage and result status changes as structured log events, and stage durations by final status
 * to the millisecond. Ids and statuses only. Only this instance's own changes pass here: another process
 * logs and measures its own.
 */
import { isFinalStageStatus, timestampKey } from "../domain/stage-machine.js";
import { logs, type Logger } from "../logger.js";
import type { TaskResultRecord, TaskStageRecord } from "../schemas/run-task-records.js";
import { createStageMetrics } from "../telemetry/metrics.js";
import type { Telemetry } from "../telemetry/providers.js";

type ResultState = Pick<TaskResultRecord, "id" | "stageId" | "runId" | "stage" | "status">;

// A stage or result nobody could reach is worth a look; every other change is routine.
const level = (to: string): "info" | "warn" => (to === "unreachable" || to === "errored" ? "warn" : "info");

/**
 * Milliseconds from the instant the stage (last) became running, the one its `running-at` names,
 * to its final status; undefined when it never ran. `running-at` names the first time
 * (an override stamps `overridden-at` instead, D36), not the last. But a stage row is written only when its
 * status changes (start, recompute, override, cancel), each write setting `updatedAt` from the
 * writer's clock to the millisecond: the stored running row's `updatedAt` is the instant it became
 * running, whichever host wrote it (D27), and the final row's is the instant it ended.
 */
function runningMs(before: TaskStageRecord, after: TaskStageRecord): number | undefined {
  const runningAt = after.statusTimestamps[timestampKey("running")];
  if (runningAt === undefined) return undefined;
  // Canceled while awaiting an override: the row no longer says when it became running; running-at does.
  const started = before.status === "running" ? Date.parse(before.updatedAt) : Date.parse(runningAt);
  return Date.parse(after.updatedAt) - started;
}

export function createStageTelemetry(logger: Logger, telemetry: Telemetry) {
  const metrics = createStageMetrics(telemetry);
  return {
    stage(before: TaskStageRecord, after: TaskStageRecord): void {
      const fields = { event: "stage.status", stageId: after.id, runId: after.runId, stage: after.stage, from: before.status, to: after.status };
      const durationMs = isFinalStageStatus(after.status) ? runningMs(before, after) : undefined;
      if (durationMs !== undefined && durationMs >= 0) metrics().duration.record(durationMs / 1000, { status: after.status, stage: after.stage });
      logger[level(after.status)](`task stage ${after.status}`, durationMs === undefined ? fields : { ...fields, durationMs });
    },
    result(before: ResultState, after: ResultState): void {
      if (!logs(logger, level(after.status))) return;
      const fields = { event: "result.status", taskResultId: after.id, stageId: after.stageId, runId: after.runId, from: before.status, to: after.status };
      logger[level(after.status)](`task result ${after.status}`, fields);
    },
  };
}
