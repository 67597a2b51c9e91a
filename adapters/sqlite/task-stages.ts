import type { Page, PageRequest } from "../../src/schemas/records.js";
import type {
  OutcomeListQuery,
  RunRecord,
  TaskDeliveryRecord,
  TaskResultOutcomeRecord,
  TaskResultRecord,
  TaskStageRecord,
} from "../../src/schemas/run-task-records.js";
import type {
  Expected,
  GuardedResultWrite,
  RunArtifactKind,
  RunStore,
  TaskDeliveryStore,
  TaskResultOutcomeStore,
  TaskResultStore,
  TaskStageStore,
} from "../../src/storage/run-tasks-types.js";
import type { SqliteDatabase, SqliteStatement } from "./driver.js";
import { deferredTx, groupedTx, immediateTx } from "./driver.js";
import { createTaskDeliveryStore } from "./task-deliveries.js";
import type { DeliveryAttemptStore } from "../../src/storage/attempts-types.js";
import * as rows from "../sql/run-task-rows.js";
import { insertSql, updateSql } from "../sql/statements.js";
import { RESULT_START, resultStarts, startResultsSql } from "../sql/delivery-statements.js";
import { batchStatement, SQLITE_DIALECT } from "./dialect.js";

/**
 * Compare-and-set guard: the status must be one of a JSON array of expected statuses and the
 * version must match. `json_each` keeps it one prepared statement whatever the set's size.
 */
const CAS = ` AND version = @expected_version AND status IN (SELECT value FROM json_each(@expected_statuses))`;
const OUTCOME_FILTER = `task_result_id = @result AND (@severity IS NULL OR severity_label = @severity)
  AND (@status IS NULL OR status_label = @status)`;

/** The statements, exported so the adapter tests can check their query plans. */
export const TASK_STAGE_SQL = {
  runGet: `SELECT * FROM runs WHERE id = ?`,
  // decision D24: a download with an API credential finds its run (runs_by_plan, runs_by_configuration_version).
  runByPlan: `SELECT * FROM runs WHERE plan_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
  runByConfiguration: `SELECT * FROM runs WHERE configuration_version_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
  // `GET /applies/:id` finds its run (runs_by_apply).
  runByApply: `SELECT * FROM runs WHERE apply_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
  runInsert: `${insertSql(rows.RUNS)} ON CONFLICT (id) DO NOTHING`,
  runsByWorkspace: `SELECT * FROM runs WHERE workspace_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
  runsCount: `SELECT COUNT(*) AS total FROM runs WHERE workspace_id = ?`,
  stageInsert: insertSql(rows.TASK_STAGES),
  stageGet: `SELECT * FROM task_stages WHERE id = ?`,
  stageByRun: `SELECT * FROM task_stages WHERE run_id = ? AND stage = ?`,
  stagesAll: `SELECT * FROM task_stages WHERE run_id = ? ORDER BY sequence, id`,
  stagesPage: `SELECT * FROM task_stages WHERE run_id = ? ORDER BY sequence, id LIMIT ? OFFSET ?`,
  stagesCount: `SELECT COUNT(*) AS total FROM task_stages WHERE run_id = ?`,
  stageCas: updateSql(rows.TASK_STAGES, CAS, rows.TASK_STAGE_STATE),
  resultInsert: insertSql(rows.TASK_RESULTS),
  resultGet: `SELECT * FROM task_results WHERE id = ?`,
  resultsByStage: `SELECT * FROM task_results WHERE stage_id = ? ORDER BY position, id`,
  resultByToken: `SELECT * FROM task_results WHERE access_token_digest = ?`,
  resultCas: updateSql(rows.TASK_RESULTS, CAS, rows.TASK_RESULT_STATE),
  resultsStart: startResultsSql(SQLITE_DIALECT),
  outcomeInsert: insertSql(rows.OUTCOMES),
  outcomeGet: `SELECT * FROM task_result_outcomes WHERE id = ?`,
  outcomesByPosition: `SELECT * FROM task_result_outcomes WHERE ${OUTCOME_FILTER}
    ORDER BY position, id LIMIT @limit OFFSET @offset`,
  outcomesBySeverity: `SELECT * FROM task_result_outcomes WHERE ${OUTCOME_FILTER}
    ORDER BY severity_rank DESC, position, id LIMIT @limit OFFSET @offset`,
  outcomesCount: `SELECT COUNT(*) AS total FROM task_result_outcomes WHERE ${OUTCOME_FILTER}`,
  // decision D26: UTF-8 bytes (a TEXT cast to BLOB keeps its encoded bytes).
  outcomeBodyBytes: `SELECT COALESCE(SUM(length(CAST(body AS BLOB))), 0) AS bytes FROM task_result_outcomes WHERE task_result_id = ?`,
  // decision D16: the sweeper's queries, each served by a partial index of what it looks for.
  resultsPastDeadline: `SELECT * FROM task_results
    WHERE deadline_at IS NOT NULL AND status IN ('pending', 'running') AND deadline_at <= @now
    ORDER BY deadline_at, id LIMIT @limit`,
  stagesUnsettled: `SELECT * FROM task_stages AS st WHERE st.status = 'running'
    AND NOT EXISTS (SELECT 1 FROM task_results AS r WHERE r.stage_id = st.id AND r.status IN ('pending', 'running'))
    ORDER BY st.id LIMIT @limit`,
} as const;

type Statements = Record<keyof typeof TASK_STAGE_SQL, SqliteStatement>;

/** Thrown inside a transaction to roll every earlier write of it back; never leaves this module. */
class GuardFailed extends Error {}

const guard = <S extends string>(expected: Expected<S>) => ({
  expected_version: expected.version,
  expected_statuses: JSON.stringify(expected.statuses),
});

export interface TaskStageStores {
  runs: RunStore;
  taskStages: TaskStageStore;
  taskResults: TaskResultStore;
  taskResultOutcomes: TaskResultOutcomeStore;
  taskDeliveries: TaskDeliveryStore;
  deliveryAttempts: DeliveryAttemptStore;
}

const one = <Row, T>(row: unknown, from: (r: Row) => T): T | null => (row ? from(row as Row) : null);
const stage = (row: unknown): TaskStageRecord | null => (row ? rows.fromTaskStageRow(row as rows.TaskStageRow) : null);
const result = (row: unknown): TaskResultRecord | null => (row ? rows.fromTaskResultRow(row as rows.TaskResultRow) : null);

/** Runs: one read per artifact kind's index, and a new run written with its stages and results. */
function createRunStore(db: SqliteDatabase, s: Statements): RunStore {
  const createRun = immediateTx(db, (run: RunRecord, stages: readonly TaskStageRecord[], results: readonly TaskResultRecord[]) => {
    if (s.runInsert.run(rows.toRunRow(run)).changes !== 1) return false;
    for (const st of stages) s.stageInsert.run(rows.toTaskStageRow(st));
    for (const r of results) s.resultInsert.run(rows.toTaskResultRow(r));
    return true;
  });
  const runsPage = deferredTx(db, (workspaceId: string, request: PageRequest): Page<RunRecord> => ({
    items: (s.runsByWorkspace.all(workspaceId, request.limit, request.offset) as rows.RunRow[]).map(rows.fromRunRow),
    total: (s.runsCount.get(workspaceId) as { total: number }).total,
  }));
  const byArtifact = (kind: RunArtifactKind) => (kind === "plan" ? s.runByPlan : kind === "apply" ? s.runByApply : s.runByConfiguration);
  return {
    get: async (id) => one(s.runGet.get(id), rows.fromRunRow),
    findByArtifact: async (kind, id) => one(byArtifact(kind).get(id, 1), rows.fromRunRow),
    // The same index read, `limit` rows instead of one.
    listByArtifact: async (kind, id, limit) => (byArtifact(kind).all(id, limit) as rows.RunRow[]).map(rows.fromRunRow),
    create: async (run, stages, results) => createRun(run, stages, results),
    listByWorkspace: async (workspaceId, request) => runsPage(workspaceId, request),
  };
}

/** Task stages: compare-and-set transitions, and a start that also starts its results and queues their deliveries. */
function createStageStore(db: SqliteDatabase, s: Statements, taskDeliveries: ReturnType<typeof createTaskDeliveryStore>): TaskStageStore {
  const stagesPage = deferredTx(db, (runId: string, request: PageRequest): Page<TaskStageRecord> => ({
    items: (s.stagesPage.all(runId, request.limit, request.offset) as rows.TaskStageRow[]).map(rows.fromTaskStageRow),
    total: (s.stagesCount.get(runId) as { total: number }).total,
  }));
  const stageCas = groupedTx(db, (expected: Expected<string>, next: TaskStageRecord): boolean =>
    s.stageCas.run({ ...rows.toTaskStageRow(next), ...guard(expected) }).changes === 1,
  );
  const resultsStart = batchStatement(db, startResultsSql, RESULT_START);
  const start = groupedTx(
    db,
    (next: TaskStageRecord, expected: Expected<string>, writes: readonly GuardedResultWrite[], deliveries: readonly TaskDeliveryRecord[]) => {
      if (s.stageCas.run({ ...rows.toTaskStageRow(next), ...guard(expected) }).changes !== 1) throw new GuardFailed();
      // decision D57: every result in one statement; one that moved since the start read it fails the start whole.
      if (writes.length > 0 && resultsStart(resultStarts(next.id, writes)).run().changes !== writes.length) throw new GuardFailed();
      taskDeliveries.insertAll(next.id, deliveries);
    },
  );
  return {
    get: async (id) => stage(s.stageGet.get(id)),
    getByRun: async (runId, runStage) => stage(s.stageByRun.get(runId, runStage)),
    async listByRun(runId, request) {
      if (request) return stagesPage(runId, request);
      const items = (s.stagesAll.all(runId) as rows.TaskStageRow[]).map(rows.fromTaskStageRow);
      return { items, total: items.length };
    },
    async transition(id, expected, next) {
      if (next.id !== id) throw new Error("transition: next.id must equal id");
      return (await stageCas(expected, next)) ? next : null;
    },
    async start(next, expected, writes, deliveries) {
      try {
        await start(next, expected, writes, deliveries);
        return next;
      } catch (error) {
        if (error instanceof GuardFailed) return null;
        throw error;
      }
    },
    listUnsettled: async (limit) => (s.stagesUnsettled.all({ limit }) as rows.TaskStageRow[]).map(rows.fromTaskStageRow),
  };
}

/** Task results: a compare-and-set transition that writes the result's outcomes with it. */
function createResultStore(db: SqliteDatabase, s: Statements): TaskResultStore {
  const resultCas = groupedTx(
    db,
    (expected: Expected<string>, next: TaskResultRecord, outcomes: readonly TaskResultOutcomeRecord[]): boolean => {
      if (s.resultCas.run({ ...rows.toTaskResultRow(next), ...guard(expected) }).changes !== 1) return false;
      for (const o of outcomes) s.outcomeInsert.run(rows.toOutcomeRow(o));
      return true;
    },
  );
  return {
    get: async (id) => result(s.resultGet.get(id)),
    listByStage: async (stageId) => (s.resultsByStage.all(stageId) as rows.TaskResultRow[]).map(rows.fromTaskResultRow),
    findByTokenDigest: async (digest) => result(s.resultByToken.get(digest)),
    async transition(id, expected, next, outcomes = []) {
      if (next.id !== id) throw new Error("transition: next.id must equal id");
      return (await resultCas(expected, next, outcomes)) ? next : null;
    },
    listPastDeadline: async (now, limit) => (s.resultsPastDeadline.all({ now, limit }) as rows.TaskResultRow[]).map(rows.fromTaskResultRow),
  };
}

/** Outcomes: read only here (written by a result's transition), filtered and sorted in SQL. */
function createOutcomeStore(db: SqliteDatabase, s: Statements): TaskResultOutcomeStore {
  const outcomesPage = deferredTx(db, (taskResultId: string, query: OutcomeListQuery, request: PageRequest) => {
    const filter = { result: taskResultId, severity: query.severity ?? null, status: query.status ?? null };
    const statement = query.sort === "severity" ? s.outcomesBySeverity : s.outcomesByPosition;
    return {
      items: (statement.all({ ...filter, limit: request.limit, offset: request.offset }) as rows.OutcomeRow[]).map(rows.fromOutcomeRow),
      total: (s.outcomesCount.get(filter) as { total: number }).total,
    };
  });
  return {
    get: async (id) => one(s.outcomeGet.get(id), rows.fromOutcomeRow),
    list: async (taskResultId, query, request) => outcomesPage(taskResultId, query, request),
    bodyBytes: async (taskResultId) => (s.outcomeBodyBytes.get(taskResultId) as { bytes: number }).bytes,
  };
}

export function createTaskStageStores(db: SqliteDatabase): TaskStageStores {
  const s = Object.fromEntries(Object.entries(TASK_STAGE_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Statements;
  const taskDeliveries = createTaskDeliveryStore(db);
  return {
    runs: createRunStore(db, s),
    taskStages: createStageStore(db, s, taskDeliveries),
    taskResults: createResultStore(db, s),
    taskResultOutcomes: createOutcomeStore(db, s),
    taskDeliveries: {
      get: taskDeliveries.get,
      listByResult: taskDeliveries.listByResult,
      claim: taskDeliveries.claim,
      settle: taskDeliveries.settle,
      expedite: taskDeliveries.expedite,
      stats: taskDeliveries.stats,
      waitingByPool: taskDeliveries.waitingByPool,
    },
    deliveryAttempts: { list: taskDeliveries.attempts.list, prune: taskDeliveries.attempts.prune },
  };
}
