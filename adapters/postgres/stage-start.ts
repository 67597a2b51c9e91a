import type { TaskDeliveryRecord, TaskStageRecord } from "../../src/schemas/run-task-records.js";
import type { Expected, GuardedResultWrite } from "../../src/storage/run-tasks-types.js";
import { TASK_STAGE_STATE, toDeliveryRow, toTaskStageRow } from "../sql/run-task-rows.js";
import { insertDeliveriesSql, insertPayloadsSql, PAYLOAD, RESULT_START, resultStarts, startResultsSql } from "../sql/delivery-statements.js";
import type { PgPoolLike } from "./driver.js";
import { retrying, rowsOf, sql } from "./driver.js";
import { MARK_ORIGIN } from "./events.js";
import { pgDialect } from "./sql.js";
import { NOTIFY_SQL } from "./notify.js";
import { createWriteGroup } from "./write-group.js";
import { deadlineOf } from "./bounded-pool.js";

interface Start {
  next: TaskStageRecord;
  expected: Expected<string>;
  writes: readonly GuardedResultWrite[];
  rows: readonly TaskDeliveryRecord[];
}

const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/** Stages one statement starts at most: its parameters stay a few MB (1.4 kB of payload a delivery). */
const MAX_GROUP = 200;

/**
 * The stage starts (`TaskStageStore.start`) asked for in one turn, as one statement: it locks each
 * stage and each of its results while its guard holds (`FOR UPDATE`: no other writer can change
 * them until COMMIT), then writes only the stages whose every guard held, with their results'
 * tokens, their outbox rows and payloads, and one wake-up (D27). A start whose guard failed writes
 * nothing, without an error, so it never undoes another start of the group. Why: a
 * transaction that sends NOTIFY holds PostgreSQL's global notify lock through its commit's WAL
 * flush, so 1,000 stages started at once, each its own transaction, committed one after another.
 * Rows are locked in id order; a deadlock with another group is retried whole.
 */
function startSql(q: string): string {
  const d = pgDialect(q);
  const ok = "(SELECT id FROM ok)";
  return `WITH s AS MATERIALIZED (
      SELECT n.*, g.expected_version, g.expected_statuses, g.result_count
      FROM json_populate_recordset(NULL::${q}task_stages, @stages::json) AS n
      JOIN unnest(@stage_ids::text[], @stage_expected_versions::int[], @stage_expected_statuses::text[], @stage_result_counts::int[])
        AS g(id, expected_version, expected_statuses, result_count) ON g.id = n.id),
    held_stages AS MATERIALIZED (
      SELECT st.id FROM ${q}task_stages AS st JOIN s ON s.id = st.id
      WHERE st.version = s.expected_version AND s.expected_statuses::jsonb ? st.status
      ORDER BY st.id FOR UPDATE OF st),
    held_results AS MATERIALIZED (
      SELECT i.stage_id FROM ${q}task_results AS r JOIN ${d.records("results", "i", RESULT_START)} ON i.id = r.id
      WHERE r.version = i.expected_version AND ${d.inJson("r.status", "i.expected_statuses")}
      ORDER BY r.id FOR UPDATE OF r),
    ok AS MATERIALIZED (
      SELECT s.id FROM s
      LEFT JOIN (SELECT stage_id, count(*) AS n FROM held_results GROUP BY stage_id) AS h ON h.stage_id = s.id
      WHERE s.id IN (SELECT id FROM held_stages) AND coalesce(h.n, 0) = s.result_count),
    started AS (
      UPDATE ${q}task_stages AS st SET ${TASK_STAGE_STATE.map((c) => `${c} = s.${c}`).join(", ")}
      FROM s WHERE st.id = s.id AND s.id IN (SELECT id FROM ok) AND ${MARK_ORIGIN}
      RETURNING st.id),
    tokens AS (${startResultsSql(d, ` AND i.stage_id IN ${ok}`)}),
    dl AS MATERIALIZED (SELECT * FROM ${d.records("payloads", "p", PAYLOAD)} WHERE p.stage_id IN ${ok}),
    deliveries AS (${insertDeliveriesSql(d, "r.id IN (SELECT id FROM dl)")}),
    payloads AS (${insertPayloadsSql(d, "true", "dl AS p")}),
    woke AS (${NOTIFY_SQL} WHERE EXISTS (SELECT 1 FROM dl))
    SELECT id FROM started UNION ALL SELECT NULL FROM woke`;
}

function startParams(starts: readonly Start[]) {
  const rows = starts.flatMap((s) => s.rows);
  return {
    stages: JSON.stringify(starts.map((s) => toTaskStageRow(s.next))),
    stage_ids: starts.map((s) => s.next.id),
    stage_expected_versions: starts.map((s) => s.expected.version),
    stage_expected_statuses: starts.map((s) => JSON.stringify(s.expected.statuses)),
    stage_result_counts: starts.map((s) => s.writes.length),
    results: JSON.stringify(starts.flatMap((s) => resultStarts(s.next.id, s.writes))),
    rows: JSON.stringify(rows.map(toDeliveryRow)),
    // JSON rather than a text[]: node-postgres escapes array elements character by character in
    // JavaScript, 2 kB for each of up to 2,000 payloads a statement.
    payloads: JSON.stringify(starts.flatMap((s) => s.rows.map((r) => ({ id: r.id, stage_id: s.next.id, payload: r.payload })))),
  };
}

/** `TaskStageStore.start` on PostgreSQL: the starts of one turn share one statement (its own transaction). */
export function createStageStart(pool: PgPoolLike, q: string, schema: string, origin: string) {
  const statement = sql(startSql(q));
  const write = async (starts: readonly Start[], at: number | undefined): Promise<(TaskStageRecord | null)[]> => {
    const rows = await retrying(() => rowsOf<{ id: string | null }>(pool, statement, { ...startParams(starts), schema, origin }, at));
    const started = new Set(rows.map((r) => r.id));
    return starts.map((s) => (started.has(s.next.id) ? s.next : null));
  };
  // A statement that fails (a taken id, say) is rolled back whole: then each start of the group is
  // written alone, in turn, so only the start at fault fails, as when every start was its own transaction.
  const group = createWriteGroup<Start, TaskStageRecord | null | Error>(async (starts, at) => {
    if (starts.length === 1) return write(starts, at);
    try {
      return await write(starts, at);
    } catch {
      const answers: (TaskStageRecord | null | Error)[] = [];
      for (const s of starts) answers.push(await write([s], at).then(([stored]) => stored ?? null, toError));
      return answers;
    }
  }, MAX_GROUP, () => deadlineOf(pool));
  return async (next: TaskStageRecord, expected: Expected<string>, writes: readonly GuardedResultWrite[], rows: readonly TaskDeliveryRecord[]) => {
    const stored = await group(next.id, { next, expected, writes, rows });
    if (stored instanceof Error) throw stored;
    return stored;
  };
}
