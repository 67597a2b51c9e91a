import type { TaskResultRecord, TaskStageRecord } from "../../src/schemas/run-task-records.js";
import type { Expected, RunArtifactKind, RunStore, TaskResultOutcomeStore, TaskResultStore, TaskStageStore } from "../../src/storage/run-tasks-types.js";
import {
  fromOutcomeRow,
  fromRunRow,
  fromTaskResultRow,
  fromTaskStageRow,
  OUTCOMES,
  RUNS,
  TASK_RESULT_STATE,
  TASK_RESULTS,
  TASK_STAGE_STATE,
  TASK_STAGES,
  toOutcomeRow,
  toRunRow,
  toTaskResultRow,
  toTaskStageRow,
  type OutcomeRow,
  type RunRow,
  type TaskResultRow,
  type TaskStageRow,
} from "../sql/run-task-rows.js";
import { insertSql, updateSql } from "../sql/statements.js";
import type { PgPoolLike, Queryable } from "./driver.js";
import { changed, rowsOf, sql, transaction } from "./driver.js";
import { pageFrom, pageOf, type PagedRow } from "./pages.js";
import { MARK_ORIGIN } from "./events.js";
import { EXPECTED, insertManySql, qualified } from "./sql.js";
import { createReadGroup } from "./read-group.js";
import { createStageStart } from "./stage-start.js";

const OUTCOME_FILTER = `task_result_id = @result AND (@severity::text IS NULL OR severity_label = @severity::text)
  AND (@status::text IS NULL OR status_label = @status::text)`;

const guard = <S extends string>(expected: Expected<S>) => ({
  expected_version: expected.version,
  expected_statuses: expected.statuses,
});

const first = <Row, T>(rows: Row[], from: (row: Row) => T): T | null => (rows[0] ? from(rows[0]) : null);
const json = <T, Row>(records: readonly T[], to: (record: T) => Row) => ({ rows: JSON.stringify(records.map(to)) });

/** The statements of the stage tables, prepared once per schema. */
function taskStageStatements(q: string) {
const runs = qualified(q, RUNS);
const stages = qualified(q, TASK_STAGES);
const results = qualified(q, TASK_RESULTS);
const outcomes = qualified(q, OUTCOMES);
const runCols = RUNS.columns.join(", ");
const stageCols = TASK_STAGES.columns.join(", ");
const resultCols = TASK_RESULTS.columns.join(", ");
const outcomeCols = OUTCOMES.columns.join(", ");
return {
  runGet: sql(`SELECT ${runCols} FROM ${runs.table} WHERE id = ANY(@keys::text[])`),
  // decision D24: a download with an API credential finds its run (runs_by_plan, runs_by_configuration_version).
  runByPlan: sql(`SELECT ${runCols} FROM ${runs.table} WHERE plan_id = @id ORDER BY created_at DESC, id DESC LIMIT @limit`),
  runByConfiguration: sql(`SELECT ${runCols} FROM ${runs.table} WHERE configuration_version_id = @id ORDER BY created_at DESC, id DESC LIMIT @limit`),
  // `GET /applies/:id` finds its run (runs_by_apply).
  runByApply: sql(`SELECT ${runCols} FROM ${runs.table} WHERE apply_id = @id ORDER BY created_at DESC, id DESC LIMIT @limit`),
  runInsert: sql(`${insertSql(runs)} ON CONFLICT (id) DO NOTHING`),
  runsByWorkspace: sql(pageOf(runs.table, runCols, "workspace_id = @workspace_id", "created_at DESC, id DESC")),
  stagesInsert: sql(insertManySql(stages)),
  stageGet: sql(`SELECT ${stageCols} FROM ${stages.table} WHERE id = @id`),
  // Keyed by run id and stage joined with a line break (read-group.ts); ids never hold one.
  stageByRun: sql(`SELECT ${stageCols} FROM ${stages.table} WHERE (run_id, stage) IN
    (SELECT split_part(k, E'\\n', 1) COLLATE "C", split_part(k, E'\\n', 2) COLLATE "C" FROM unnest(@keys::text[]) AS k)`),
  stagesAll: sql(`SELECT ${stageCols} FROM ${stages.table} WHERE run_id = @run_id ORDER BY sequence, id`),
  stagesPage: sql(pageOf(stages.table, stageCols, "run_id = @run_id", "sequence, id")),
  // Compare-and-set writes only the state columns (the rest is fixed when the run is created).
  stageCas: sql(updateSql(stages, ` AND ${EXPECTED} AND ${MARK_ORIGIN}`, TASK_STAGE_STATE)),
  resultsInsert: sql(insertManySql(results)),
  resultGet: sql(`SELECT ${resultCols} FROM ${results.table} WHERE id = @id`),
  resultsByStage: sql(`SELECT ${resultCols} FROM ${results.table} WHERE stage_id = ANY(@keys::text[]) ORDER BY stage_id, position, id`),
  resultByToken: sql(`SELECT ${resultCols} FROM ${results.table} WHERE access_token_digest = @digest`),
  resultCas: sql(updateSql(results, ` AND ${EXPECTED} AND ${MARK_ORIGIN}`, TASK_RESULT_STATE)),
  outcomesInsert: sql(insertManySql(outcomes)),
  outcomeGet: sql(`SELECT ${outcomeCols} FROM ${outcomes.table} WHERE id = @id`),
  outcomesByPosition: sql(pageOf(outcomes.table, outcomeCols, OUTCOME_FILTER, "position, id")),
  outcomesBySeverity: sql(pageOf(outcomes.table, outcomeCols, OUTCOME_FILTER, "severity_rank DESC, position, id")),
  // decision D26: bytes of the UTF-8 database encoding (bigint arrives as a string).
  outcomeBodyBytes: sql(`SELECT COALESCE(SUM(octet_length(body)), 0)::bigint AS bytes FROM ${outcomes.table} WHERE task_result_id = @result`),
  // decision D16: the sweeper's queries: open results by deadline through a partial index of
  // exactly those, unsettled stages through the running-stage index and each stage's results.
  resultsPastDeadline: sql(`SELECT ${resultCols} FROM ${results.table}
    WHERE open = 1 AND deadline_at IS NOT NULL AND deadline_at <= @now
    ORDER BY deadline_at, id LIMIT @limit`),
  stagesUnsettled: sql(`SELECT ${stageCols} FROM ${stages.table} AS st WHERE st.status = 'running'
    AND NOT EXISTS (SELECT 1 FROM ${results.table} AS r WHERE r.stage_id = st.id AND r.status IN ('pending', 'running'))
    ORDER BY st.id LIMIT @limit`),
};
}
type TaskStageStatements = ReturnType<typeof taskStageStatements>;

/** Runs; a create writes the run, its stages and its results in one transaction. */
function createRunStore(pool: PgPoolLike, s: TaskStageStatements, readRun: (id: string) => Promise<RunRow[]>): RunStore {
  const byArtifact = (kind: RunArtifactKind) => (kind === "plan" ? s.runByPlan : kind === "apply" ? s.runByApply : s.runByConfiguration);
  return {
    get: async (id) => first(await readRun(id), fromRunRow),
    findByArtifact: async (kind, id) => first(await rowsOf<RunRow>(pool, byArtifact(kind), { id, limit: 1 }), fromRunRow),
    // decision D24: ids may repeat across organizations; the same index read, `limit` rows instead of one.
    listByArtifact: async (kind, id, limit) => (await rowsOf<RunRow>(pool, byArtifact(kind), { id, limit })).map(fromRunRow),
    listByWorkspace: async (workspaceId, request) =>
      pageFrom(await rowsOf<PagedRow<RunRow>>(pool, s.runsByWorkspace, { workspace_id: workspaceId, ...request }), fromRunRow),
    // A racing create of the same id waits on the primary key until this one commits, then
    // inserts nothing and rolls back: exactly one create stores anything.
    create: (run, stageRecords, resultRecords) =>
      transaction(pool, async (client) => {
        if ((await changed(client, s.runInsert, toRunRow(run))) !== 1) return false;
        if (stageRecords.length > 0) await changed(client, s.stagesInsert, json(stageRecords, toTaskStageRow));
        if (resultRecords.length > 0) await changed(client, s.resultsInsert, json(resultRecords, toTaskResultRow));
        return true;
      }),
  };
}

export interface TaskStageStores {
  runs: RunStore;
  taskStages: TaskStageStore;
  taskResults: TaskResultStore;
  taskResultOutcomes: TaskResultOutcomeStore;
}

/**
 * Runs, stages, results and outcomes; a stage start also writes the outbox rows it enqueues
 * (stage-start.ts). Status changes carry `origin` to the status event triggers (events.ts).
 */
export function createTaskStageStores(pool: PgPoolLike, q: string, schema: string, origin: string): TaskStageStores {
  const s = taskStageStatements(q);
  // The reads a stage start makes, coalesced when many come together (read-group.ts).
  const read = {
    run: createReadGroup<RunRow>(pool, s.runGet, (r) => r.id),
    stageByRun: createReadGroup<TaskStageRow>(pool, s.stageByRun, (r) => `${r.run_id}\n${r.stage}`),
    resultsByStage: createReadGroup<TaskResultRow>(pool, s.resultsByStage, (r) => r.stage_id),
  };

  const stageCas = (db: Queryable, expected: Expected<string>, next: TaskStageRecord) =>
    changed(db, s.stageCas, { ...toTaskStageRow(next), ...guard(expected), origin });
  const resultCas = (db: Queryable, expected: Expected<string>, next: TaskResultRecord) =>
    changed(db, s.resultCas, { ...toTaskResultRow(next), ...guard(expected), origin });

  return {
    runs: createRunStore(pool, s, read.run),
    taskStages: {
      get: async (id) => first(await rowsOf<TaskStageRow>(pool, s.stageGet, { id }), fromTaskStageRow),
      getByRun: async (runId, stage) => first(await read.stageByRun(`${runId}\n${stage}`), fromTaskStageRow),
      async listByRun(runId, request) {
        if (request) return pageFrom(await rowsOf<PagedRow<TaskStageRow>>(pool, s.stagesPage, { run_id: runId, ...request }), fromTaskStageRow);
        const items = (await rowsOf<TaskStageRow>(pool, s.stagesAll, { run_id: runId })).map(fromTaskStageRow);
        return { items, total: items.length };
      },
      async transition(id, expected, next) {
        if (next.id !== id) throw new Error("transition: next.id must equal id");
        return (await stageCas(pool, expected, next)) === 1 ? next : null;
      },
      start: createStageStart(pool, q, schema, origin),
      listUnsettled: async (limit) => (await rowsOf<TaskStageRow>(pool, s.stagesUnsettled, { limit })).map(fromTaskStageRow),
    },
    taskResults: {
      get: async (id) => first(await rowsOf<TaskResultRow>(pool, s.resultGet, { id }), fromTaskResultRow),
      listByStage: async (stageId) => (await read.resultsByStage(stageId)).map(fromTaskResultRow),
      findByTokenDigest: async (digest) => first(await rowsOf<TaskResultRow>(pool, s.resultByToken, { digest }), fromTaskResultRow),
      async transition(id, expected, next, added = []) {
        if (next.id !== id) throw new Error("transition: next.id must equal id");
        if (added.length === 0) return (await resultCas(pool, expected, next)) === 1 ? next : null;
        return transaction(pool, async (client) => {
          if ((await resultCas(client, expected, next)) !== 1) return null;
          await changed(client, s.outcomesInsert, json(added, toOutcomeRow));
          return next;
        });
      },
      listPastDeadline: async (now, limit) => (await rowsOf<TaskResultRow>(pool, s.resultsPastDeadline, { now, limit })).map(fromTaskResultRow),
    },
    taskResultOutcomes: {
      get: async (id) => first(await rowsOf<OutcomeRow>(pool, s.outcomeGet, { id }), fromOutcomeRow),
      async list(taskResultId, query, request) {
        const statement = query.sort === "severity" ? s.outcomesBySeverity : s.outcomesByPosition;
        const params = { result: taskResultId, severity: query.severity ?? null, status: query.status ?? null, ...request };
        return pageFrom(await rowsOf<PagedRow<OutcomeRow>>(pool, statement, params), fromOutcomeRow);
      },
      async bodyBytes(taskResultId) {
        const [row] = await rowsOf<{ bytes: string }>(pool, s.outcomeBodyBytes, { result: taskResultId });
        return Number(row!.bytes);
      },
    },
  };
}
