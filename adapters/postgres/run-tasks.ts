import type { GuardedResult } from "../../src/storage/types.js";
import type { RunTaskStore, WorkspaceTaskStore } from "../../src/storage/run-tasks-types.js";
import {
  fromRunTaskRow,
  fromWorkspaceTaskRow,
  RUN_TASKS,
  toRunTaskRow,
  toWorkspaceTaskRow,
  WORKSPACE_TASKS,
  type RunTaskRow,
  type WorkspaceTaskRow,
} from "../sql/run-task-rows.js";
import { insertSql } from "../sql/statements.js";
import type { PgPoolLike } from "./driver.js";
import { changed, isViolation, rowsOf, sql } from "./driver.js";
import { pageFrom, pageOf, type PagedRow } from "./pages.js";
import { casSql, qualified } from "./sql.js";
import { createReadGroup } from "./read-group.js";

const TASK_COLUMNS = RUN_TASKS.columns.join(", ");
const WS_COLUMNS = WORKSPACE_TASKS.columns.join(", ");

type CasRow = { updated: boolean; found: boolean };

/** The statements of the run task tables, prepared once per schema. */
function runTaskStatements(q: string) {
const tasks = qualified(q, RUN_TASKS);
const wsTasks = qualified(q, WORKSPACE_TASKS);
return {
  taskGet: sql(`SELECT ${TASK_COLUMNS} FROM ${tasks.table} WHERE id = @id`),
  // Stages' tasks (stage start), by the primary key; keyed for a read group (read-group.ts).
  taskGetMany: sql(`SELECT ${TASK_COLUMNS} FROM ${tasks.table} WHERE id = ANY(@keys::text[])`),
  taskAll: sql(`SELECT ${TASK_COLUMNS} FROM ${tasks.table} WHERE organization = @organization ORDER BY created_at, id`),
  taskPage: sql(pageOf(tasks.table, TASK_COLUMNS, "organization = @organization", "created_at, id")),
  taskInsert: sql(insertSql(tasks)),
  taskUpdate: sql(casSql(tasks, "version = @expected_version")),
  // Workspace tasks referring to the task go with it (ON DELETE CASCADE), in the same statement.
  taskDelete: sql(`DELETE FROM ${tasks.table} WHERE id = @id`),
  // decision D34: served by run_tasks_by_agent_pool.
  taskCountByPool: sql(`SELECT count(*)::int AS total FROM ${tasks.table} WHERE agent_pool_id = @pool`),
  wsGet: sql(`SELECT ${WS_COLUMNS} FROM ${wsTasks.table} WHERE id = @id`),
  wsByTask: sql(`SELECT ${WS_COLUMNS} FROM ${wsTasks.table} WHERE task_id = @task_id ORDER BY created_at, id`),
  wsAll: sql(`SELECT ${WS_COLUMNS} FROM ${wsTasks.table} WHERE workspace_id = @workspace_id ORDER BY created_at, id`),
  wsPage: sql(pageOf(wsTasks.table, WS_COLUMNS, "workspace_id = @workspace_id", "created_at, id")),
  wsInsert: sql(insertSql(wsTasks)),
  wsUpdate: sql(casSql(wsTasks, "version = @expected_version")),
  wsDelete: sql(`DELETE FROM ${wsTasks.table} WHERE id = @id`),
};
}
type RunTaskStatements = ReturnType<typeof runTaskStatements>;

/** Organization run tasks; the unique name index is the duplicate guard. */
function createRunTaskStore(pool: PgPoolLike, s: RunTaskStatements): RunTaskStore {
  // decision D57: the stages started together read all their tasks in one statement.
  const readTask = createReadGroup<RunTaskRow>(pool, s.taskGetMany, (row) => row.id);
  return {
    async get(id) {
      const [row] = await rowsOf<RunTaskRow>(pool, s.taskGet, { id });
      return row ? fromRunTaskRow(row) : null;
    },
    async getMany(ids) {
      const found = (await Promise.all([...new Set(ids)].map(readTask))).flat().map(fromRunTaskRow);
      return found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },
    async list(organization, request) {
      if (request) return pageFrom(await rowsOf<PagedRow<RunTaskRow>>(pool, s.taskPage, { organization, ...request }), fromRunTaskRow);
      const items = (await rowsOf<RunTaskRow>(pool, s.taskAll, { organization })).map(fromRunTaskRow);
      return { items, total: items.length };
    },
    async insert(record) {
      try {
        await changed(pool, s.taskInsert, toRunTaskRow(record));
        return { ok: true };
      } catch (error) {
        // The name index is the guard; a reused id (the primary key) propagates.
        if (isViolation(error, "run_tasks_unique_name")) return { ok: false, reason: "duplicate-name" };
        throw error;
      }
    },
    async update(record, expectedVersion) {
      try {
        const [row] = await rowsOf<CasRow>(pool, s.taskUpdate, { ...toRunTaskRow(record), expected_version: expectedVersion });
        return verdict(row);
      } catch (error) {
        if (isViolation(error, "run_tasks_unique_name")) return { ok: false, reason: "duplicate-name" };
        throw error;
      }
    },
    delete: async (id) => (await changed(pool, s.taskDelete, { id })) === 1,
    countByAgentPool: async (agentPoolId) => (await rowsOf<{ total: number }>(pool, s.taskCountByPool, { pool: agentPoolId }))[0]?.total ?? 0,
  };
}

/** Workspace run tasks; the task's foreign key and the unique pair index are the guards. */
function createWorkspaceTaskStore(pool: PgPoolLike, s: RunTaskStatements): WorkspaceTaskStore {
  return {
    async get(id) {
      const [row] = await rowsOf<WorkspaceTaskRow>(pool, s.wsGet, { id });
      return row ? fromWorkspaceTaskRow(row) : null;
    },
    async list(workspaceId, request) {
      const params = { workspace_id: workspaceId };
      if (request) return pageFrom(await rowsOf<PagedRow<WorkspaceTaskRow>>(pool, s.wsPage, { ...params, ...request }), fromWorkspaceTaskRow);
      const items = (await rowsOf<WorkspaceTaskRow>(pool, s.wsAll, params)).map(fromWorkspaceTaskRow);
      return { items, total: items.length };
    },
    listByTask: async (taskId) => (await rowsOf<WorkspaceTaskRow>(pool, s.wsByTask, { task_id: taskId })).map(fromWorkspaceTaskRow),
    async insert(record) {
      try {
        await changed(pool, s.wsInsert, toWorkspaceTaskRow(record));
        return { ok: true };
      } catch (error) {
        // The foreign key check share-locks the task row until this insert commits, so a racing
        // task delete either waits for it (and cascades to it) or wins first (and this one fails).
        if (isViolation(error, "workspace_tasks_task")) return { ok: false, reason: "missing-task" };
        if (isViolation(error, "workspace_tasks_unique_task")) return { ok: false, reason: "duplicate-task" };
        throw error;
      }
    },
    async update(record, expectedVersion) {
      const [row] = await rowsOf<CasRow>(pool, s.wsUpdate, { ...toWorkspaceTaskRow(record), expected_version: expectedVersion });
      return verdict(row);
    },
    delete: async (id) => (await changed(pool, s.wsDelete, { id })) === 1,
  };
}

export function createRunTaskStores(pool: PgPoolLike, q: string): { runTasks: RunTaskStore; workspaceTasks: WorkspaceTaskStore } {
  const s = runTaskStatements(q);



  return { runTasks: createRunTaskStore(pool, s), workspaceTasks: createWorkspaceTaskStore(pool, s) };
}

function verdict(row: CasRow | undefined): GuardedResult<"missing" | "stale"> {
  if (row?.updated) return { ok: true };
  return { ok: false, reason: row?.found ? "stale" : "missing" };
}
