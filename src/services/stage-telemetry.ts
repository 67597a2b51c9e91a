/**
 * Stage and result status changes as structured log events, and stage durations by final status
 * (issue 17). Ids and statuses only. Only this instance's own changes pass here: another process
 * logs and measures its own.
 */
import { isFinalStageStatus, timestampKey } from "../domain/stage-machine.js";
import type { Logger } from "../logger.js";
import type { TaskResultRecord, TaskStageRecord } from "../schemas/run-task-records.js";
import { createStageMetrics } from "../telemetry/metrics.js";

type ResultState = Pick<TaskResultRecord, "id" | "stageId" | "runId" | "stage" | "status">;

// A stage or result nobody could reach is worth a look; every other change is routine.
const level = (to: string): "info" | "warn" => (to === "unreachable" || to === "errored" ? "warn" : "info");

export function createStageTelemetry(logger: Logger) {
  const metrics = createStageMetrics();
  return {
    stage(before: TaskStageRecord, after: TaskStageRecord): void {
      const fields = { event: "stage.status", stageId: after.id, runId: after.runId, stage: after.stage, from: before.status, to: after.status };
      const started = after.statusTimestamps[timestampKey("running")];
      const ended = after.statusTimestamps[timestampKey(after.status)];
      const durationMs = isFinalStageStatus(after.status) && started && ended ? Date.parse(ended) - Date.parse(started) : undefined;
      if (durationMs !== undefined && durationMs >= 0) metrics.duration.record(durationMs / 1000, { status: after.status, stage: after.stage });
      logger[level(after.status)](`task stage ${after.status}`, durationMs === undefined ? fields : { ...fields, durationMs });
    },
    result(before: ResultState, after: ResultState): void {
      const fields = { event: "result.status", taskResultId: after.id, stageId: after.stageId, runId: after.runId, from: before.status, to: after.status };
      logger[level(after.status)](`task result ${after.status}`, fields);
    },
  };
}
