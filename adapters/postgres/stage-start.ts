import type { TaskDeliveryRecord, TaskStageRecord } from "../../src/schemas/run-task-records.js";
import type { Expected, GuardedResultWrite } from "../../src/storage/run-tasks-types.js";
import { DELIVERIES, TASK_RESULT_START, TASK_STAGE_STATE, toDeliveryRow, toTaskStageRow } from "../sql/run-task-rows.js";
import type { PgPoolLike } from "./driver.js";
import { retrying, rowsOf, sql } from "./driver.js";
import { MARK_ORIGIN } from "./events.js";
import { TEXT } from "./sql.js";
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
  const cols = DELIVERIES.columns.join(", ");
  return `WITH s AS MATERIALIZED (
      SELECT n.*, g.expected_version, g.expected_statuses, g.result_count
      FROM json_populate_recordset(NULL::${q}task_stages, @stages::json) AS n
      JOIN unnest(@stage_ids::text[], @stage_expected_versions::int[], @stage_expected_statuses::text[], @stage_result_counts::int[])
        AS g(id, expected_version, expected_statuses, result_count) ON g.id = n.id),
    i AS MATERIALIZED (
      SELECT * FROM unnest(@result_stage_ids::text[], @result_ids::text[], @result_digests::text[], @result_agent_pool_ids::text[],
        @result_deadline_at::text[], @result_deadline_max_at::text[],
        @result_versions::int[], @result_updated_at::text[], @result_expected_versions::int[], @result_expected_statuses::text[])
        AS i(stage_id, id, access_token_digest, agent_pool_id, deadline_at, deadline_max_at, version, updated_at, expected_version, expected_statuses)),
    held_stages AS MATERIALIZED (
      SELECT st.id FROM ${q}task_stages AS st JOIN s ON s.id = st.id
      WHERE st.version = s.expected_version AND s.expected_statuses::jsonb ? st.status
      ORDER BY st.id FOR UPDATE OF st),
    held_results AS MATERIALIZED (
      SELECT i.stage_id FROM ${q}task_results AS r JOIN i ON i.id = r.id
      WHERE r.version = i.expected_version AND i.expected_statuses::jsonb ? r.status
      ORDER BY r.id FOR UPDATE OF r),
    ok AS MATERIALIZED (
      SELECT s.id FROM s
      LEFT JOIN (SELECT stage_id, count(*) AS n FROM held_results GROUP BY stage_id) AS h ON h.stage_id = s.id
      WHERE s.id IN (SELECT id FROM held_stages) AND coalesce(h.n, 0) = s.result_count),
    started AS (
      UPDATE ${q}task_stages AS st SET ${TASK_STAGE_STATE.map((c) => `${c} = s.${c}`).join(", ")}
      FROM s WHERE st.id = s.id AND s.id IN (SELECT id FROM ok) AND ${MARK_ORIGIN}
      RETURNING st.id),
    tokens AS (
      UPDATE ${q}task_results AS r SET ${TASK_RESULT_START.map((c) => `${c} = i.${c}`).join(", ")}
      FROM i WHERE r.id = i.id AND i.stage_id IN (SELECT id FROM ok)),
    dl AS MATERIALIZED (
      SELECT * FROM json_to_recordset(@payloads::json) AS p(id ${TEXT}, stage_id ${TEXT}, payload text)
      WHERE p.stage_id IN (SELECT id FROM ok)),
    deliveries AS (
      INSERT INTO ${q}task_deliveries (${cols})
      SELECT ${cols} FROM json_populate_recordset(NULL::${q}task_deliveries, @rows::json) AS d
      WHERE d.id IN (SELECT id FROM dl)),
    payloads AS (INSERT INTO ${q}task_delivery_payloads (delivery_id, payload) SELECT id, payload FROM dl),
    woke AS (${NOTIFY_SQL} WHERE EXISTS (SELECT 1 FROM dl))
    SELECT id FROM started UNION ALL SELECT NULL FROM woke`;
}

function startParams(starts: readonly Start[]) {
  const writes = starts.flatMap((s) => s.writes);
  const rows = starts.flatMap((s) => s.rows);
  return {
    stages: JSON.stringify(starts.map((s) => toTaskStageRow(s.next))),
    stage_ids: starts.map((s) => s.next.id),
    stage_expected_versions: starts.map((s) => s.expected.version),
    stage_expected_statuses: starts.map((s) => JSON.stringify(s.expected.statuses)),
    stage_result_counts: starts.map((s) => s.writes.length),
    result_stage_ids: starts.flatMap((s) => s.writes.map(() => s.next.id)),
    result_ids: writes.map((w) => w.next.id),
    result_digests: writes.map((w) => w.next.accessTokenDigest),
    result_agent_pool_ids: writes.map((w) => w.next.agentPoolId ?? null),
    result_deadline_at: writes.map((w) => w.next.deadlineAt),
    result_deadline_max_at: writes.map((w) => w.next.deadlineMaxAt),
    result_versions: writes.map((w) => w.next.version),
    result_updated_at: writes.map((w) => w.next.updatedAt),
    result_expected_versions: writes.map((w) => w.expected.version),
    result_expected_statuses: writes.map((w) => JSON.stringify(w.expected.statuses)),
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
