import type { Page, PageRequest } from "../../src/schemas/records.js";
import type { RunTaskRecord, WorkspaceTaskRecord } from "../../src/schemas/run-task-records.js";
import type { GuardedResult } from "../../src/storage/types.js";
import type { RunTaskStore, WorkspaceTaskStore } from "../../src/storage/run-tasks-types.js";
import type { SqliteDatabase, SqliteStatement } from "./driver.js";
import { deferredTx, immediateTx, isUniqueViolation } from "./driver.js";
import * as rows from "../sql/run-task-rows.js";
import { insertSql, updateSql } from "../sql/statements.js";

/** The statements, exported so the adapter tests can check their query plans. */
export const RUN_TASK_SQL = {
  taskGet: `SELECT * FROM run_tasks WHERE id = ?`,
  // A stage's tasks in one statement (stage start), by the primary key.
  taskGetMany: `SELECT * FROM run_tasks WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  taskAll: `SELECT * FROM run_tasks WHERE organization = ? ORDER BY created_at, id`,
  taskPage: `SELECT * FROM run_tasks WHERE organization = ? ORDER BY created_at, id LIMIT ? OFFSET ?`,
  taskCount: `SELECT COUNT(*) AS total FROM run_tasks WHERE organization = ?`,
  taskInsert: insertSql(rows.RUN_TASKS),
  taskUpdate: updateSql(rows.RUN_TASKS, " AND version = @expected_version"),
  taskExists: `SELECT 1 AS found FROM run_tasks WHERE id = ?`,
  taskDelete: `DELETE FROM run_tasks WHERE id = ?`,
  taskDeleteAttached: `DELETE FROM workspace_tasks WHERE task_id = ?`,
  // decision D34: served by run_tasks_by_agent_pool.
  taskCountByPool: `SELECT COUNT(*) AS total FROM run_tasks WHERE agent_pool_id = ?`,
  wsGet: `SELECT * FROM workspace_tasks WHERE id = ?`,
  wsAll: `SELECT * FROM workspace_tasks WHERE workspace_id = ? ORDER BY created_at, id`,
  wsPage: `SELECT * FROM workspace_tasks WHERE workspace_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?`,
  wsByTask: `SELECT * FROM workspace_tasks WHERE task_id = ? ORDER BY created_at, id`,
  wsCount: `SELECT COUNT(*) AS total FROM workspace_tasks WHERE workspace_id = ?`,
  wsInsert: insertSql(rows.WORKSPACE_TASKS),
  wsUpdate: updateSql(rows.WORKSPACE_TASKS, " AND version = @expected_version"),
  wsExists: `SELECT 1 AS found FROM workspace_tasks WHERE id = ?`,
  wsDelete: `DELETE FROM workspace_tasks WHERE id = ?`,
} as const;

type Statements = Record<keyof typeof RUN_TASK_SQL, SqliteStatement>;

const task = (row: unknown): RunTaskRecord | null => (row ? rows.fromRunTaskRow(row as rows.RunTaskRow) : null);
const wsTask = (row: unknown): WorkspaceTaskRecord | null => (row ? rows.fromWorkspaceTaskRow(row as rows.WorkspaceTaskRow) : null);
const total = (statement: SqliteStatement, key: string): number => (statement.get(key) as { total: number }).total;

// A UNIQUE violation rolls the transaction back and becomes the guard's answer; anything else
// (a PRIMARY KEY clash included) propagates, carrying no values (SQLite names columns only).
const unique = <R>(write: () => R, onDuplicate: R): R => {
  try {
    return write();
  } catch (error) {
    if (isUniqueViolation(error)) return onDuplicate;
    throw error;
  }
};

/** An organization's run tasks; deleting one detaches it from every workspace in the same transaction. */
function createRunTaskStore(db: SqliteDatabase, s: Statements): RunTaskStore {
  const taskPage = deferredTx(db, (organization: string, request: PageRequest): Page<RunTaskRecord> => ({
    items: (s.taskPage.all(organization, request.limit, request.offset) as rows.RunTaskRow[]).map(rows.fromRunTaskRow),
    total: total(s.taskCount, organization),
  }));
  const insertTask = immediateTx(db, (record: RunTaskRecord) => void s.taskInsert.run(rows.toRunTaskRow(record)));
  const updateTask = immediateTx(db, (record: RunTaskRecord, expectedVersion: number): GuardedResult<"missing" | "stale"> => {
    if (s.taskUpdate.run({ ...rows.toRunTaskRow(record), expected_version: expectedVersion }).changes === 1) return { ok: true };
    return { ok: false, reason: s.taskExists.get(record.id) ? "stale" : "missing" };
  });
  const deleteTask = immediateTx(db, (id: string): boolean => {
    if (s.taskDelete.run(id).changes !== 1) return false;
    s.taskDeleteAttached.run(id);
    return true;
  });
  return {
    get: async (id) => task(s.taskGet.get(id)),
    getMany: async (ids) => (s.taskGetMany.all(JSON.stringify(ids)) as rows.RunTaskRow[]).map(rows.fromRunTaskRow),
    async list(organization, request) {
      if (request) return taskPage(organization, request);
      const items = (s.taskAll.all(organization) as rows.RunTaskRow[]).map(rows.fromRunTaskRow);
      return { items, total: items.length };
    },
    async insert(record) {
      return unique<GuardedResult<"duplicate-name">>(() => {
        insertTask(record);
        return { ok: true };
      }, { ok: false, reason: "duplicate-name" });
    },
    async update(record, expectedVersion) {
      return unique<GuardedResult<"missing" | "stale" | "duplicate-name">>(() => updateTask(record, expectedVersion), {
        ok: false,
        reason: "duplicate-name",
      });
    },
    delete: async (id) => deleteTask(id),
    countByAgentPool: async (agentPoolId) => total(s.taskCountByPool, agentPoolId),
  };
}

/** A workspace's attached tasks; attaching checks the task exists in the same transaction. */
function createWorkspaceTaskStore(db: SqliteDatabase, s: Statements): WorkspaceTaskStore {
  const wsPage = deferredTx(db, (workspaceId: string, request: PageRequest): Page<WorkspaceTaskRecord> => ({
    items: (s.wsPage.all(workspaceId, request.limit, request.offset) as rows.WorkspaceTaskRow[]).map(rows.fromWorkspaceTaskRow),
    total: total(s.wsCount, workspaceId),
  }));
  const insertWs = immediateTx(db, (record: WorkspaceTaskRecord): GuardedResult<"duplicate-task" | "missing-task"> => {
    if (!s.taskExists.get(record.taskId)) return { ok: false, reason: "missing-task" };
    s.wsInsert.run(rows.toWorkspaceTaskRow(record));
    return { ok: true };
  });
  const updateWs = immediateTx(db, (record: WorkspaceTaskRecord, expectedVersion: number): GuardedResult<"missing" | "stale"> => {
    if (s.wsUpdate.run({ ...rows.toWorkspaceTaskRow(record), expected_version: expectedVersion }).changes === 1) return { ok: true };
    return { ok: false, reason: s.wsExists.get(record.id) ? "stale" : "missing" };
  });
  const deleteWs = immediateTx(db, (id: string) => s.wsDelete.run(id).changes === 1);
  return {
    get: async (id) => wsTask(s.wsGet.get(id)),
    async list(workspaceId, request) {
      if (request) return wsPage(workspaceId, request);
      const items = (s.wsAll.all(workspaceId) as rows.WorkspaceTaskRow[]).map(rows.fromWorkspaceTaskRow);
      return { items, total: items.length };
    },
    listByTask: async (taskId) => (s.wsByTask.all(taskId) as rows.WorkspaceTaskRow[]).map(rows.fromWorkspaceTaskRow),
    async insert(record) {
      return unique<GuardedResult<"duplicate-task" | "missing-task">>(() => insertWs(record), { ok: false, reason: "duplicate-task" });
    },
    update: async (record, expectedVersion) => updateWs(record, expectedVersion),
    delete: async (id) => deleteWs(id),
  };
}

export function createRunTaskStores(db: SqliteDatabase): { runTasks: RunTaskStore; workspaceTasks: WorkspaceTaskStore } {
  const s = Object.fromEntries(Object.entries(RUN_TASK_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Statements;
  return { runTasks: createRunTaskStore(db, s), workspaceTasks: createWorkspaceTaskStore(db, s) };
}
