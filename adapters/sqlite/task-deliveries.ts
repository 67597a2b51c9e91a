import type { ResultStatus } from "../../src/schemas/run-tasks.js";
import type { TaskDeliveryRecord } from "../../src/schemas/run-task-records.js";
import type { ClaimedDelivery, DeliveryClaim, DeliverySettlement, SettleOutcome, TaskDeliveryStore } from "../../src/storage/run-tasks-types.js";
import type { GuardedResult } from "../../src/storage/types.js";
import { assertDistinctIds, attemptSlot, byDueThenId, plusMs } from "../../src/storage/outbox-rules.js";
import { noReportSetSql } from "../sql/attempt-rows.js";
import type { SqliteDatabase, SqliteStatement } from "./driver.js";
import type { SqlDialect } from "../sql/delivery-statements.js";
import { groupedTx, immediateTx } from "./driver.js";
import { fromDeliveryRow, toDeliveryRow, type DeliveryRow } from "../sql/run-task-rows.js";
import { deliveryReadsSql, fromBacklogRows, fromStatsRow, retryingSql, type BacklogRow, type StatsRow } from "../sql/delivery-reads.js";
import {
  advanceResultsSql,
  ATTEMPT_COLUMNS,
  DELIVERY_COLUMNS,
  heldRowsSql,
  insertDeliveriesSql,
  insertPayloadsSql,
  LEASE_SET,
  openWindowsSql,
  PAYLOAD,
  pickSql,
  recordAttemptsSql,
  RESULT_ADVANCE,
  SETTLE_ENTRY,
  settleInput,
  settleRowsSql,
} from "../sql/delivery-statements.js";
import { batchStatement, SQLITE_DIALECT } from "./dialect.js";
import { createAttemptStore, type SqliteAttemptStore } from "./delivery-attempts.js";
import type { Migration } from "./migration.js";

/**
 * decision D15: one statement picks and leases, inside BEGIN IMMEDIATE, so of two connections
 * (or processes) the second only ever sees the first one's leases. decision D34: `pools` says
 * whose rows: the platform's own (no pool) or those of some agent pools.
 */
const claimSql = (pools: string): string => `UPDATE task_deliveries SET ${LEASE_SET}
    WHERE id IN (${pickSql(SQLITE_DIALECT, pools)})
    RETURNING *`;

/**
 * decision D34: outbox rows carry the agent pool that delivers them (null: the platform itself);
 * an agent dispatcher's claim walks its pools' open rows in due order.
 */
export const DELIVERY_POOLS_MIGRATION: Migration = {
  name: "0017-delivery-pools",
  up: `
    ALTER TABLE task_deliveries ADD COLUMN agent_pool_id TEXT;
    CREATE INDEX task_deliveries_open_by_pool ON task_deliveries (agent_pool_id, due_at, id)
      WHERE closed_at IS NULL AND agent_pool_id IS NOT NULL;
  `,
};

/** decision D34: an attempt records the agent that sent it (null: the platform did). */
export const ATTEMPT_AGENTS_MIGRATION: Migration = {
  name: "0018-attempt-agents",
  up: `ALTER TABLE delivery_attempts ADD COLUMN agent_id TEXT;`,
};

/**
 * The outbox statements (decisions D15, D16), exported so the adapter tests can check their plans.
 * Every UPDATE names only the columns it changes; the payload sits in its own table and is read
 * once per claim.
 */
const recordAttemptsOneByOne = (d: SqlDialect): string => recordAttemptsSql(d, "true", false);
const advanceSql = (d: SqlDialect): string => `${advanceResultsSql(d)} ${d.returning("r", "id")}`;

/** The batch statements (D57), prepared per batch size; `TASK_DELIVERY_SQL` holds their text for one row. */
function batchStatements(db: SqliteDatabase) {
  return {
    insert: batchStatement(db, insertDeliveriesSql, DELIVERY_COLUMNS),
    insertPayloads: batchStatement(db, insertPayloadsSql, PAYLOAD),
    settleRows: batchStatement(db, settleRowsSql, SETTLE_ENTRY),
    // decision D58: the rows of a batch's hand-outs still held, read only when it has any.
    heldRows: batchStatement(db, (d: SqlDialect) => heldRowsSql(d), SETTLE_ENTRY),
    recordAttempts: batchStatement(db, recordAttemptsOneByOne, ATTEMPT_COLUMNS),
    advanceResults: batchStatement(db, advanceSql, RESULT_ADVANCE),
  };
}
type Batches = ReturnType<typeof batchStatements>;

export const TASK_DELIVERY_SQL = {
  // decision D57: a stage start's rows and payloads, each in one statement.
  insert: insertDeliveriesSql(SQLITE_DIALECT),
  insertPayloads: insertPayloadsSql(SQLITE_DIALECT),
  ...deliveryReadsSql(SQLITE_DIALECT),
  claim: claimSql("agent_pool_id IS NULL"),
  // decision D34: an agent dispatcher's claim, by task_deliveries_open_by_pool.
  claimPools: claimSql("agent_pool_id IN (SELECT value FROM json_each(@pools))"),
  // decision D16: the window opens at the first attempt, in the claim that hands the attempt out.
  openWindows: openWindowsSql(SQLITE_DIALECT, "SELECT value FROM json_each(@ids)"),
  claimed: `SELECT d.id, p.payload, r.status, r.status_timestamps, r.deadline_at, r.version, r.updated_at,
      t.id AS task_found, t.hmac_key
    FROM json_each(@ids) AS j JOIN task_deliveries AS d ON d.id = j.value
    JOIN task_delivery_payloads AS p ON p.delivery_id = d.id
    LEFT JOIN task_results AS r ON r.id = d.task_result_id
    LEFT JOIN run_tasks AS t ON t.id = d.task_id`,
  // decision D57: a settle batch in at most three statements (delivery-statements.ts): the rows,
  // the attempts of the rows written, the results of the rows closed.
  settleRows: settleRowsSql(SQLITE_DIALECT),
  recordAttempts: recordAttemptsOneByOne(SQLITE_DIALECT),
  advanceResults: advanceSql(SQLITE_DIALECT),
  // decision D31: the result's retrying row, with the result's guard (D16), by task_deliveries_by_result.
  retrying: retryingSql(SQLITE_DIALECT),
  expedite: `UPDATE task_deliveries SET due_at = @now WHERE id = @id AND due_at > @now`,
  // decision D58: a re-taken pool row's attempt still under way is closed (by the primary key),
  // and counted on its row.
  closeUnreported: `UPDATE delivery_attempts
    SET ${noReportSetSql("max(0, CAST(round((julianday(@now) - julianday(started_at)) * 86400000) AS INTEGER))")}
    WHERE outcome = 'under-way' AND (task_result_id, slot, delivery_id, number) IN (SELECT json_extract(value, '$.r'),
      json_extract(value, '$.s'), json_extract(value, '$.d'), json_extract(value, '$.n') FROM json_each(@keys))
    RETURNING delivery_id, detail`,
  countUnreported: `UPDATE task_deliveries SET attempt = attempt + 1, last_error = @last_error WHERE id = @id`,
} as const;

type Statements = Record<keyof typeof TASK_DELIVERY_SQL, SqliteStatement>;

interface ClaimedExtra {
  id: string;
  payload: string;
  status: string | null;
  status_timestamps: string | null;
  deadline_at: string | null;
  version: number | null;
  updated_at: string | null;
  task_found: string | null;
  hmac_key: string | null;
}

function toClaimed(row: Omit<DeliveryRow, "payload">, extra: ClaimedExtra): ClaimedDelivery {
  return {
    row: fromDeliveryRow({ ...row, payload: extra.payload }),
    result:
      extra.status === null
        ? null
        : {
            status: extra.status as ResultStatus,
            statusTimestamps: JSON.parse(extra.status_timestamps!) as Record<string, string>,
            deadlineAt: extra.deadline_at,
            version: extra.version!,
            updatedAt: extra.updated_at!,
          },
    task: extra.task_found === null ? null : { hmacKey: extra.hmac_key },
  };
}

/**
 * Groups of advances in which each result appears once, in batch order: a result named by two
 * closes of one batch (never, in practice) is advanced by the first, and the second is then
 * checked against what the first wrote, as if each had been its own statement.
 */
function rounds<A extends { result_id: string }>(advances: readonly A[]): A[][] {
  const out: A[][] = [];
  const seen = new Map<string, number>();
  for (const a of advances) {
    const round = seen.get(a.result_id) ?? 0;
    seen.set(a.result_id, round + 1);
    (out[round] ??= []).push(a);
  }
  return out;
}

/**
 * decision D58: closes the attempts of claimed pool rows that an agent took and never reported, and
 * counts each on its row (as `rows` are returned too).
 */
function closeUnreported(s: Statements, rows: Omit<DeliveryRow, "payload">[], now: string): void {
  const keys = rows.map((r) => ({ r: r.task_result_id, s: attemptSlot(r.attempt + 1), d: r.id, n: r.attempt + 1 }));
  const closed = s.closeUnreported.all({ now, keys: JSON.stringify(keys) }) as { delivery_id: string; detail: string }[];
  for (const { delivery_id: id, detail } of closed) {
    s.countUnreported.run({ id, last_error: detail });
    const row = rows.find((r) => r.id === id)!;
    Object.assign(row, { attempt: row.attempt + 1, last_error: detail });
  }
}

/** Writes a batch; resolves per entry what it did. Runs inside the batch's transaction. */
function settleAll(b: Batches, batch: readonly DeliverySettlement[]): SettleOutcome[] {
  const { entries } = settleInput(batch);
  const rows = b.settleRows(entries).all() as { id: string }[];
  const handOuts = entries.filter((e) => e.type === "hand-out");
  if (handOuts.length > 0) rows.push(...(b.heldRows(handOuts).all() as { id: string }[]));
  const written = new Set(rows.map((r) => r.id));
  const { advances, attempts } = settleInput(batch.filter((e) => written.has(e.id)));
  if (attempts.length > 0) b.recordAttempts(attempts).run();
  const advanced = new Set<string>();
  for (const round of rounds(advances)) {
    const moved = new Set((b.advanceResults(round).all() as { id: string }[]).map((r) => r.id));
    for (const a of round) if (moved.has(a.result_id)) advanced.add(a.delivery_id);
  }
  return batch.map((e) => ({ written: written.has(e.id), result: advanced.has(e.id) }));
}

export interface SqliteDeliveryStore extends TaskDeliveryStore {
  /** Inserts a stage's rows and their payloads; called inside `TaskStageStore.start`'s transaction. */
  insertAll(stageId: string, rows: readonly TaskDeliveryRecord[]): void;
  /** The attempts `settle` records (decision D31): `Storage.deliveryAttempts`. */
  attempts: SqliteAttemptStore;
}

export function createTaskDeliveryStore(db: SqliteDatabase): SqliteDeliveryStore {
  const s = Object.fromEntries(Object.entries(TASK_DELIVERY_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Statements;

  const claim = groupedTx(db, (request: DeliveryClaim): ClaimedDelivery[] => {
    const leaseExpiresAt = plusMs(request.now, request.leaseMs);
    const params = { now: request.now, owner: request.owner, lease_expires_at: leaseExpiresAt, limit: Math.max(0, request.limit) };
    const pools = request.pools ?? null;
    if (pools !== null && pools.length === 0) return [];
    const rows = (pools === null ? s.claim.all(params) : s.claimPools.all({ ...params, pools: JSON.stringify(pools) })) as Omit<DeliveryRow, "payload">[];
    if (rows.length === 0) return [];
    if (pools !== null) closeUnreported(s, rows, request.now);
    const ids = JSON.stringify(rows.map((r) => r.task_result_id));
    const { ms, maxMs } = request.window;
    s.openWindows.run({ ids, now: request.now, deadline_at: plusMs(request.now, ms), deadline_max_at: maxMs === null ? null : plusMs(request.now, maxMs) });
    const extras = new Map((s.claimed.all({ ids: JSON.stringify(rows.map((r) => r.id)) }) as ClaimedExtra[]).map((x) => [x.id, x]));
    // RETURNING hands rows back in no promised order; the contract's order is restored here.
    return rows.map((row) => toClaimed(row, extras.get(row.id)!)).sort((a, b) => byDueThenId(a.row, b.row));
  });

  const attempts = createAttemptStore(db);
  const b = batchStatements(db);
  const settle = groupedTx(db, (batch: readonly DeliverySettlement[]): SettleOutcome[] => settleAll(b, batch));
  // One BEGIN IMMEDIATE: no claim can lease the row between the check and the move.
  const expedite = immediateTx(db, (result: string, now: string): GuardedResult<"not-retrying" | "leased"> => {
    const row = s.retrying.get({ result, now }) as { id: string; lease_expires_at: string | null } | undefined;
    if (!row) return { ok: false, reason: "not-retrying" };
    if (row.lease_expires_at !== null && row.lease_expires_at > now) return { ok: false, reason: "leased" };
    s.expedite.run({ id: row.id, now });
    return { ok: true };
  });

  const joined = (row: unknown): TaskDeliveryRecord | null => (row ? fromDeliveryRow(row as DeliveryRow) : null);
  return {
    attempts,
    insertAll(stageId, rows) {
      if (rows.length === 0) return;
      b.insert(rows.map(toDeliveryRow)).run();
      b.insertPayloads(rows.map((d) => ({ id: d.id, stage_id: stageId, payload: d.payload }))).run();
    },
    get: async (id) => joined(s.get.get({ id })),
    listByResult: async (taskResultId) => (s.byResult.all({ result: taskResultId }) as DeliveryRow[]).map(fromDeliveryRow),
    claim: async (request) => claim(request),
    async settle(batch) {
      assertDistinctIds(batch);
      return batch.length === 0 ? [] : settle(batch);
    },
    expedite: async (taskResultId, now) => expedite(taskResultId, now),
    stats: async (now) => fromStatsRow(s.stats.get({ now }) as StatsRow),
    waitingByPool: async (now, limit) => fromBacklogRows(s.waitingByPool.all({ now, limit }) as BacklogRow[]),
  };
}
