import type { RunTaskRecord, WorkspaceTaskRecord } from "../../src/schemas/run-task-records.js";
import type { RunTaskStore, WorkspaceTaskStore } from "../../src/storage/run-tasks-types.js";
import { clone } from "./clone.js";
import { byCreation, page } from "./ordering.js";

/** The maps of the run task configuration: organization tasks and their workspace attachments. */
export interface MemoryTaskConfigMaps {
  tasks: Map<string, RunTaskRecord>;
  workspaceTasks: Map<string, WorkspaceTaskRecord>;
}

/** Organization run tasks; deleting one removes its workspace tasks in the same step. */
export function createMemoryRunTaskStore({ tasks, workspaceTasks }: MemoryTaskConfigMaps): RunTaskStore {
  const nameTaken = (r: RunTaskRecord): boolean =>
    [...tasks.values()].some((o) => o.id !== r.id && o.organization === r.organization && o.name === r.name);

  return {
    async get(id) {
      const row = tasks.get(id);
      return row ? clone(row) : null;
    },
    async getMany(ids) {
      return [...new Set(ids)].sort().flatMap((id) => (tasks.has(id) ? [clone(tasks.get(id)!)] : []));
    },
    async list(organization, request) {
      return page([...tasks.values()].filter((t) => t.organization === organization).sort(byCreation), request);
    },
    async insert(record) {
      if (tasks.has(record.id)) throw new Error("run task id already exists");
      if (nameTaken(record)) return { ok: false, reason: "duplicate-name" };
      tasks.set(record.id, clone(record));
      return { ok: true };
    },
    async update(record, expectedVersion) {
      const row = tasks.get(record.id);
      if (!row) return { ok: false, reason: "missing" };
      if (row.version !== expectedVersion) return { ok: false, reason: "stale" };
      if (nameTaken(record)) return { ok: false, reason: "duplicate-name" };
      tasks.set(record.id, clone(record));
      return { ok: true };
    },
    async delete(id) {
      if (!tasks.delete(id)) return false;
      for (const [wid, w] of workspaceTasks) if (w.taskId === id) workspaceTasks.delete(wid);
      return true;
    },
    async countByAgentPool(agentPoolId) {
      return [...tasks.values()].filter((t) => t.agentPoolId === agentPoolId).length;
    },
  };
}

/** Workspace run tasks: an attachment needs its task, and a workspace attaches a task once. */
export function createMemoryWorkspaceTaskStore({ tasks, workspaceTasks }: MemoryTaskConfigMaps): WorkspaceTaskStore {
  return {
    async get(id) {
      const row = workspaceTasks.get(id);
      return row ? clone(row) : null;
    },
    async list(workspaceId, request) {
      return page([...workspaceTasks.values()].filter((w) => w.workspaceId === workspaceId).sort(byCreation), request);
    },
    async listByTask(taskId) {
      return [...workspaceTasks.values()].filter((w) => w.taskId === taskId).sort(byCreation).map(clone);
    },
    async insert(record) {
      if (workspaceTasks.has(record.id)) throw new Error("workspace task id already exists");
      if (!tasks.has(record.taskId)) return { ok: false, reason: "missing-task" };
      const taken = [...workspaceTasks.values()].some((w) => w.workspaceId === record.workspaceId && w.taskId === record.taskId);
      if (taken) return { ok: false, reason: "duplicate-task" };
      workspaceTasks.set(record.id, clone(record));
      return { ok: true };
    },
    async update(record, expectedVersion) {
      const row = workspaceTasks.get(record.id);
      if (!row) return { ok: false, reason: "missing" };
      if (row.version !== expectedVersion) return { ok: false, reason: "stale" };
      workspaceTasks.set(record.id, clone(record));
      return { ok: true };
    },
    async delete(id) {
      return workspaceTasks.delete(id);
    },
  };
}
