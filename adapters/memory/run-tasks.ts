import type { RunTaskRecord, TaskDeliveryRecord } from "../../src/schemas/run-task-records.js";
import type {
  RunStore,
  RunTaskStore,
  TaskDeliveryStore,
  TaskResultOutcomeStore,
  TaskResultStore,
  TaskStageStore,
  WorkspaceTaskStore,
} from "../../src/storage/run-tasks-types.js";
import type { DeliveryAttemptStore } from "../../src/storage/attempts-types.js";
import { createMemoryRunStore } from "./runs.js";
import { createRunTaskState } from "./run-task-state.js";
import { createMemoryRunTaskStore, createMemoryWorkspaceTaskStore } from "./task-config.js";
import { createMemoryDeliveryStore } from "./task-deliveries.js";
import { createMemoryOutcomeStore, createMemoryTaskResultStore } from "./task-results.js";
import { createMemoryTaskStageStore } from "./task-stages.js";

export interface MemoryRunTaskStores {
  runTasks: RunTaskStore;
  workspaceTasks: WorkspaceTaskStore;
  runs: RunStore;
  taskStages: TaskStageStore;
  taskResults: TaskResultStore;
  taskResultOutcomes: TaskResultOutcomeStore;
  taskDeliveries: TaskDeliveryStore;
  deliveryAttempts: DeliveryAttemptStore;
}

/** The maps holding sealed values, for the adapter's sealed-value store (./sealed-values.ts). */
export interface MemoryRunTaskMaps {
  tasks: Map<string, RunTaskRecord>;
  deliveries: Map<string, TaskDeliveryRecord>;
}

/**
 * The run task aggregates in memory. They share their maps (deleting a task removes its workspace
 * tasks; starting a stage writes results and deliveries), and every method runs synchronously
 * inside its promise, so each guarded primitive is atomic without locks.
 */
export function createMemoryRunTaskStores(): { stores: MemoryRunTaskStores; sealed: MemoryRunTaskMaps } {
  const state = createRunTaskState();
  const { tasks, deliveries, results } = state;
  const deliveryStore = createMemoryDeliveryStore({ deliveries, results, tasks });
  const stores = {
    runTasks: createMemoryRunTaskStore(state),
    workspaceTasks: createMemoryWorkspaceTaskStore(state),
    runs: createMemoryRunStore(state),
    taskStages: createMemoryTaskStageStore(state, deliveryStore),
    taskResults: createMemoryTaskResultStore(state),
    taskResultOutcomes: createMemoryOutcomeStore(state),
    taskDeliveries: deliveryStore,
    deliveryAttempts: deliveryStore.attempts,
  };
  return { stores, sealed: { tasks, deliveries } };
}
