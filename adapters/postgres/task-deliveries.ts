import type { ResultStatus } from "../../src/schemas/run-tasks.js";
import type { ClaimedDelivery, DeliverySettlement, SettleOutcome, TaskDeliveryStore } from "../../src/storage/run-tasks-types.js";
import { assertDistinctIds, plusMs } from "../../src/storage/outbox-rules.js";
import { fromDeliveryRow, type DeliveryRow } from "../sql/run-task-rows.js";
import { claimSql } from "./outbox-claim.js";
import { deliveryReadsSql, retryingSql, fromBacklogRows, fromStatsRow, type BacklogRow, type StatsRow } from "../sql/delivery-reads.js";
import { advanceResultsSql, heldRowsSql, recordAttemptsSql, settleInput, settleRowsSql, SETTLE_ENTRY } from "../sql/delivery-statements.js";
import type { PgPoolLike, Statement } from "./driver.js";
import { changed, retrying, rowsOf, sql, transaction } from "./driver.js";
import { MARK_ORIGIN } from "./events.js";
import { NOTIFY_SQL } from "./notify.js";
import type { PgMigration } from "./migration.js";
import { pgDialect, TEXT } from "./sql.js";

/**
 * decision D34: outbox rows carry the agent pool that delivers them (null: the platform itself);
 * an agent dispatcher's claim walks its pools' open rows in due order.
 */
export const DELIVERY_POOLS_MIGRATION: PgMigration = {
  name: "0014-delivery-pools",
  up: (q) => `
    ALTER TABLE ${q}task_deliveries ADD COLUMN agent_pool_id ${TEXT};
    CREATE INDEX task_deliveries_open_by_pool ON ${q}task_deliveries (agent_pool_id, due_at, id)
      WHERE closed_at IS NULL AND agent_pool_id IS NOT NULL;
  `,
};

/** decision D34: an attempt records the agent that sent it (null: the platform did). */
export const ATTEMPT_AGENTS_MIGRATION: PgMigration = {
  name: "0015-attempt-agents",
  up: (q) => `ALTER TABLE ${q}delivery_attempts ADD COLUMN agent_id ${TEXT};`,
};

/** A claimed row joined with its payload, its result as the claim left it, and its task's key. */
type ClaimRow = DeliveryRow & {
  result_found: boolean;
  result_status: string | null;
  result_status_timestamps: string | null;
  result_deadline_at: string | null;
  result_version: number | null;
  result_updated_at: string | null;
  task_found: boolean;
  task_hmac_key: string | null;
};

export function createTaskDeliveryStore(
  pool: PgPoolLike,
  schema: string,
  q: string,
  origin: string,
): TaskDeliveryStore {
  const reads = deliveryReadsSql(pgDialect(q));
  const s = {
    get: sql(reads.get),
    byResult: sql(reads.byResult),
    stats: sql(reads.stats),
    waitingByPool: sql(reads.waitingByPool),
    claim: sql(claimSql(q, "agent_pool_id IS NULL", false)),
    // decision D34: an agent dispatcher's claim, by task_deliveries_open_by_pool.
    claimPools: sql(claimSql(q, "agent_pool_id = ANY(@pools::text[])", true)),
    settle: sql(settleSql(q)),
    expedite: sql(expediteSql(q)),
  };

  const taskDeliveries: TaskDeliveryStore = {
    async get(id) {
      const [row] = await rowsOf<DeliveryRow>(pool, s.get, { id });
      return row ? fromDeliveryRow(row) : null;
    },
    listByResult: async (taskResultId) => (await rowsOf<DeliveryRow>(pool, s.byResult, { result: taskResultId })).map(fromDeliveryRow),
    async claim(request) {
      if (request.limit <= 0) return [];
      const params = {
        now: request.now,
        owner: request.owner,
        limit: request.limit,
        lease_expires_at: plusMs(request.now, request.leaseMs),
        deadline_at: plusMs(request.now, request.window.ms),
        deadline_max_at: request.window.maxMs === null ? null : plusMs(request.now, request.window.maxMs),
      };
      const pools = request.pools ?? null;
      if (pools !== null && pools.length === 0) return [];
      const statement = pools === null ? s.claim : s.claimPools;
      const claimed = await retrying(() => outboxStatement<ClaimRow>(pool, statement, pools === null ? params : { ...params, pools: [...pools] }));
      return claimed.map(toClaimed);
    },
    async settle(batch) {
      assertDistinctIds(batch);
      if (batch.length === 0) return [];
      const rows = await retrying(() => outboxStatement<{ kind: string; id: string }>(pool, s.settle, { schema, origin, ...settleParams(batch) }));
      const written = new Set(rows.filter((r) => r.kind === "row").map((r) => r.id));
      const advanced = new Set(rows.filter((r) => r.kind === "result").map((r) => r.id));
      return batch.map((entry): SettleOutcome => ({ written: written.has(entry.id), result: advanced.has(entry.id) }));
    },
    async expedite(taskResultId, now) {
      const [row] = await rowsOf<{ found: number; free: number }>(pool, s.expedite, { schema, result: taskResultId, now });
      if (!row?.found) return { ok: false, reason: "not-retrying" };
      return row.free ? { ok: true } : { ok: false, reason: "leased" };
    },
    stats: async (now) => fromStatsRow((await rowsOf<StatsRow>(pool, s.stats, { now }))[0]),
    waitingByPool: async (now, limit) => fromBacklogRows(await rowsOf<BacklogRow>(pool, s.waitingByPool, { now, limit })),
  };
  return taskDeliveries;
}

function toClaimed(row: ClaimRow): ClaimedDelivery {
  return {
    row: fromDeliveryRow(row),
    result: row.result_found
      ? {
          status: row.result_status as ResultStatus,
          statusTimestamps: JSON.parse(row.result_status_timestamps!) as Record<string, string>,
          deadlineAt: row.result_deadline_at,
          version: row.result_version!,
          updatedAt: row.result_updated_at!,
        }
      : null,
    task: row.task_found ? { hmacKey: row.task_hmac_key } : null,
  };
}

/**
 * A claim must walk `task_deliveries_open_by_due` in due order and stop after `limit` rows, and a
 * settle must find its rows by key. On statistics that undercount the outbox (a table not analyzed
 * yet, or analyzed before a burst) the planner instead reads every open row, by a bitmap scan or a
 * sequential one, and sorts them: 9,000 rows read and sorted per claim of 100 in the 2-host bench.
 * So both run in a transaction that rules those scans out (and `jit`, which the
 * statements never repay), whatever the statistics say.
 */
const OUTBOX_PLAN = "SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off; SET LOCAL jit = off";

const outboxStatement = <Row>(pool: PgPoolLike, statement: Statement, params: object): Promise<Row[]> =>
  transaction(pool, async (client) => {
    await client.query({ text: OUTBOX_PLAN });
    return rowsOf<Row>(client, statement, params);
  });

/**
 * One statement for a whole batch, composed of the shared batch statements (D57,
 * delivery-statements.ts): each entry's row write, guarded by its fencing token and an open row;
 * a close's result advance, only for rows written and results still as expected (it carries the
 * origin to the status event trigger, events.ts); the attempts of the rows written (D31). It
 * answers with the ids of the rows written (`row`) and of the entries whose result advanced, and
 * wakes listeners (`woke`) when a retry or a release made a row claimable again.
 */
function settleSql(q: string): string {
  const d = pgDialect(q);
  const written = "(SELECT id FROM written)";
  return `WITH written AS (${settleRowsSql(d)}),
    held AS (${heldRowsSql(d, " FOR SHARE OF d")}),
    advanced AS (${advanceResultsSql(d, ` AND a.delivery_id IN ${written} AND ${MARK_ORIGIN}`)} RETURNING a.delivery_id),
    woke AS (
      ${NOTIFY_SQL} WHERE EXISTS (SELECT 1 FROM written w JOIN ${d.records("entries", "i", SETTLE_ENTRY)} ON i.id = w.id WHERE i.type <> 'close')),
    recorded AS (${recordAttemptsSql(d, `a.delivery_id IN (SELECT id FROM written UNION ALL SELECT id FROM held)`)} RETURNING 1)
    SELECT 'row' AS kind, id FROM written
    UNION ALL SELECT 'row', id FROM held
    UNION ALL SELECT 'result', delivery_id FROM advanced
    UNION ALL SELECT 'woke', NULL FROM woke`;
}

/**
 * decision D31, retry now: the result's retrying row is locked (a claim holding it is waited for,
 * then seen with its lease), and moved only when no lease holds it; `free` then wakes the
 * dispatchers (D27). `found` 0 is `not-retrying`, `free` 0 `leased`.
 */
function expediteSql(q: string): string {
  const free = `t.lease_expires_at IS NULL OR t.lease_expires_at <= @now`;
  return `WITH target AS (${retryingSql(pgDialect(q), " FOR UPDATE OF d")}),
    moved AS (
      UPDATE ${q}task_deliveries AS d SET due_at = @now FROM target t WHERE d.id = t.id AND (${free}) AND d.due_at > @now RETURNING d.id),
    woke AS (${NOTIFY_SQL} WHERE EXISTS (SELECT 1 FROM target t WHERE ${free}))
    SELECT (SELECT count(*) FROM target)::int AS found, (SELECT count(*) FROM target t WHERE ${free})::int AS free,
      (SELECT count(*) FROM woke)::int AS woke`;
}

function settleParams(batch: readonly DeliverySettlement[]) {
  const { entries, advances, attempts } = settleInput(batch);
  return { entries: JSON.stringify(entries), advances: JSON.stringify(advances), attempts: JSON.stringify(attempts) };
}
