import type { RunRecord, RunTaskRecord, TaskDeliveryRecord, TaskResultOutcomeRecord, TaskResultRecord, TaskStageRecord, WorkspaceTaskRecord } from "../../src/schemas/run-task-records.js";
import type { Expected } from "../../src/storage/run-tasks-types.js";
import { createIndex } from "./indexes.js";

export const OPEN_RESULT: ReadonlySet<string> = new Set(["pending", "running"]);
/** Whether a row still is what a compare-and-set expects of it. */
export const holds = <S extends string>(row: { status: S; version: number }, expected: Expected<S>): boolean =>
  expected.statuses.includes(row.status) && row.version === expected.version;

/**
 * The maps and indexes the run task stores share (deleting a task removes its workspace tasks;
 * starting a stage writes results and deliveries).
 */
export function createRunTaskState() {
  const results = new Map<string, TaskResultRecord>();
  const resultsByDigest = createIndex<TaskResultRecord>((r) => r.accessTokenDigest);
  return {
    tasks: new Map<string, RunTaskRecord>(),
    workspaceTasks: new Map<string, WorkspaceTaskRecord>(),
    runs: new Map<string, RunRecord>(),
    stages: new Map<string, TaskStageRecord>(),
    results,
    outcomes: new Map<string, TaskResultOutcomeRecord>(),
    deliveries: new Map<string, TaskDeliveryRecord>(),
    stagesByRun: createIndex<TaskStageRecord>((s) => s.runId),
    runsByWorkspace: createIndex<RunRecord>((r) => r.workspaceId),
    resultsByStage: createIndex<TaskResultRecord>((r) => r.stageId),
    resultsByDigest,
    outcomesByResult: createIndex<TaskResultOutcomeRecord>((o) => o.taskResultId),
    each: <T>(map: Map<string, T>, ids: readonly string[]): T[] => ids.map((id) => map.get(id)!),
    /** Replaces a stored result, keeping the digest index right. */
    putResult(id: string, next: Partial<TaskResultRecord>): void {
      const row = results.get(id)!;
      resultsByDigest.remove(row);
      Object.assign(row, next);
      resultsByDigest.add(row);
    },
  };
}
export type RunTaskState = ReturnType<typeof createRunTaskState>;
