import type { Page, PageRequest } from "../../src/schemas/records.js";
import type {
  RunRecord,
  RunTaskRecord,
  TaskDeliveryRecord,
  TaskResultOutcomeRecord,
  TaskResultRecord,
  TaskStageRecord,
  WorkspaceTaskRecord,
} from "../../src/schemas/run-task-records.js";
import type {
  Expected,
  RunStore,
  RunTaskStore,
  TaskDeliveryStore,
  TaskResultOutcomeStore,
  TaskResultStore,
  TaskStageStore,
  WorkspaceTaskStore,
} from "../../src/storage/run-tasks-types.js";
import type { DeliveryAttemptStore } from "../../src/storage/attempts-types.js";
import { createIndex } from "./indexes.js";
import { createMemoryDeliveryStore } from "./task-deliveries.js";
import { clone } from "./clone.js";

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

const cmp = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);
const byCreation = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number =>
  cmp(a.createdAt, b.createdAt) || cmp(a.id, b.id);
const page = <T>(all: T[], request?: PageRequest): Page<T> => ({
  items: (request ? all.slice(request.offset, request.offset + request.limit) : all).map(clone),
  total: all.length,
});
const OPEN_RESULT: ReadonlySet<string> = new Set(["pending", "running"]);
const holds = <S extends string>(row: { status: S; version: number }, expected: Expected<S>): boolean =>
  expected.statuses.includes(row.status) && row.version === expected.version;

/**
 * The run task aggregates in memory. They share their maps (deleting a task removes its workspace
 * tasks; starting a stage writes results and deliveries), and every method runs synchronously
 * inside its promise, so each guarded primitive is atomic without locks.
 */
export function createMemoryRunTaskStores(): { stores: MemoryRunTaskStores; sealed: MemoryRunTaskMaps } {
  const tasks = new Map<string, RunTaskRecord>();
  const workspaceTasks = new Map<string, WorkspaceTaskRecord>();
  const runs = new Map<string, RunRecord>();
  const stages = new Map<string, TaskStageRecord>();
  const results = new Map<string, TaskResultRecord>();
  const outcomes = new Map<string, TaskResultOutcomeRecord>();
  const deliveries = new Map<string, TaskDeliveryRecord>();
  const stagesByRun = createIndex<TaskStageRecord>((s) => s.runId);
  const runsByWorkspace = createIndex<RunRecord>((r) => r.workspaceId);
  const resultsByStage = createIndex<TaskResultRecord>((r) => r.stageId);
  const resultsByDigest = createIndex<TaskResultRecord>((r) => r.accessTokenDigest);
  const outcomesByResult = createIndex<TaskResultOutcomeRecord>((o) => o.taskResultId);
  const each = <T>(map: Map<string, T>, ids: readonly string[]): T[] => ids.map((id) => map.get(id)!);
  /** Replaces a stored result, keeping the digest index right. */
  const putResult = (id: string, next: Partial<TaskResultRecord>): void => {
    const row = results.get(id)!;
    resultsByDigest.remove(row);
    Object.assign(row, next);
    resultsByDigest.add(row);
  };

  const nameTaken = (r: RunTaskRecord): boolean =>
    [...tasks.values()].some((o) => o.id !== r.id && o.organization === r.organization && o.name === r.name);

  const runTaskStore: RunTaskStore = {
    async get(id) {
      const row = tasks.get(id);
      return row ? clone(row) : null;
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
  };

  const workspaceTaskStore: WorkspaceTaskStore = {
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

  const runStore: RunStore = {
    async get(id) {
      const row = runs.get(id);
      return row ? clone(row) : null;
    },
    async findByArtifact(kind, id) {
      return (await runStore.listByArtifact!(kind, id, 1))[0] ?? null;
    },
    // Issue 34.6: newest first (createdAt, then id), at most `limit`.
    async listByArtifact(kind, id, limit) {
      const named = [...runs.values()].filter((run) => (kind === "plan" ? run.planId : kind === "apply" ? run.applyId : run.configurationVersionId) === id);
      named.sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));
      return named.slice(0, limit).map(clone);
    },
    async create(run, newStages, newResults) {
      if (runs.has(run.id)) return false;
      const clash = newStages.some((s) => stages.has(s.id)) || newResults.some((r) => results.has(r.id));
      if (clash) throw new Error("task stage or result id already exists");
      runs.set(run.id, clone(run));
      runsByWorkspace.add(run);
      for (const s of newStages) {
        stages.set(s.id, clone(s));
        stagesByRun.add(s);
      }
      for (const r of newResults) {
        results.set(r.id, clone(r));
        resultsByStage.add(r);
        resultsByDigest.add(r);
      }
      return true;
    },
    async listByWorkspace(workspaceId, request) {
      const all = each(runs, runsByWorkspace.ids(workspaceId)).sort((a, b) => cmp(b.createdAt, a.createdAt) || cmp(b.id, a.id));
      return { items: all.slice(request.offset, request.offset + request.limit).map(clone), total: all.length };
    },
  };

  const stagesOf = (runId: string): TaskStageRecord[] =>
    each(stages, stagesByRun.ids(runId)).sort((a, b) => cmp(a.sequence, b.sequence) || cmp(a.id, b.id));

  const taskStageStore: TaskStageStore = {
    async get(id) {
      const row = stages.get(id);
      return row ? clone(row) : null;
    },
    async getByRun(runId, stage) {
      const row = each(stages, stagesByRun.ids(runId)).find((s) => s.stage === stage);
      return row ? clone(row) : null;
    },
    async listByRun(runId, request) {
      return page(stagesOf(runId), request);
    },
    async transition(id, expected, next) {
      if (next.id !== id) throw new Error("transition: next.id must equal id");
      const row = stages.get(id);
      if (!row || !holds(row, expected)) return null;
      stages.set(id, clone(next));
      return clone(next);
    },
    async start(next, expected, writes, newDeliveries) {
      const row = stages.get(next.id);
      if (!row || !holds(row, expected)) return null;
      for (const w of writes) {
        const current = results.get(w.next.id);
        if (!current || !holds(current, w.expected)) return null;
      }
      const writing = new Set(writes.map((w) => w.next.id));
      const digestTaken = writes.some(
        (w) => w.next.accessTokenDigest !== null && resultsByDigest.ids(w.next.accessTokenDigest).some((id) => !writing.has(id)),
      );
      if (digestTaken || newDeliveries.some((d) => deliveries.has(d.id))) throw new Error("token digest or delivery id already exists");
      stages.set(next.id, clone(next));
      for (const w of writes) {
        const { accessTokenDigest, version, updatedAt } = w.next;
        putResult(w.next.id, { accessTokenDigest, version, updatedAt });
      }
      deliveryStore.insertAll(newDeliveries);
      return clone(next);
    },
    async listUnsettled(limit) {
      const open = new Set([...results.values()].filter((r) => OPEN_RESULT.has(r.status)).map((r) => r.stageId));
      return [...stages.values()]
        .filter((st) => st.status === "running" && !open.has(st.id))
        .sort((a, b) => cmp(a.id, b.id))
        .slice(0, limit)
        .map(clone);
    },
  };

  const taskResultStore: TaskResultStore = {
    async get(id) {
      const row = results.get(id);
      return row ? clone(row) : null;
    },
    async listByStage(stageId) {
      return each(results, resultsByStage.ids(stageId))
        .sort((a, b) => cmp(a.position, b.position) || cmp(a.id, b.id))
        .map(clone);
    },
    async findByTokenDigest(digest) {
      const [id] = resultsByDigest.ids(digest);
      const row = id === undefined ? undefined : results.get(id);
      return row ? clone(row) : null;
    },
    async transition(id, expected, next, added = []) {
      if (next.id !== id) throw new Error("transition: next.id must equal id");
      const row = results.get(id);
      if (!row || !holds(row, expected)) return null;
      if (added.some((o) => outcomes.has(o.id))) throw new Error("outcome id already exists");
      putResult(id, clone(next));
      for (const o of added) {
        outcomes.set(o.id, clone(o));
        outcomesByResult.add(o);
      }
      return clone(next);
    },
    async listPastDeadline(now, limit) {
      return [...results.values()]
        .filter((r) => r.deadlineAt !== null && r.deadlineAt <= now && OPEN_RESULT.has(r.status))
        .sort((a, b) => cmp(a.deadlineAt!, b.deadlineAt!) || cmp(a.id, b.id))
        .slice(0, limit)
        .map(clone);
    },
  };

  const outcomeStore: TaskResultOutcomeStore = {
    async get(id) {
      const row = outcomes.get(id);
      return row ? clone(row) : null;
    },
    async list(taskResultId, query, request) {
      const all = each(outcomes, outcomesByResult.ids(taskResultId))
        .filter(
          (o) =>
            (query.severity === undefined || o.severityLabel === query.severity) &&
            (query.status === undefined || o.statusLabel === query.status),
        )
        .sort((a, b) =>
          (query.sort === "severity" ? b.severityRank - a.severityRank : 0) || cmp(a.position, b.position) || cmp(a.id, b.id),
        );
      return page(all, request);
    },
    async bodyBytes(taskResultId) {
      return each(outcomes, outcomesByResult.ids(taskResultId)).reduce((sum, o) => sum + (o.body === null ? 0 : Buffer.byteLength(o.body, "utf8")), 0);
    },
  };

  const deliveryStore = createMemoryDeliveryStore({ deliveries, results, tasks });

  const stores = {
    runTasks: runTaskStore,
    workspaceTasks: workspaceTaskStore,
    runs: runStore,
    taskStages: taskStageStore,
    taskResults: taskResultStore,
    taskResultOutcomes: outcomeStore,
    taskDeliveries: deliveryStore,
    deliveryAttempts: deliveryStore.attempts,
  };
  return { stores, sealed: { tasks, deliveries } };
}
