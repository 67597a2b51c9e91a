import type { OutboxStats, PoolBacklog } from "../../src/storage/outbox-types.js";
import { DELIVERIES } from "./delivery-rows.js";
import type { SqlDialect } from "./delivery-statements.js";

// decision D57: the outbox's reads, written once for both SQL dialects (delivery-statements.ts).

/**
 * decision D31, retry now: the result's retrying row (open, attempted, its result pending and
 * within its deadline, D16), by `task_deliveries_by_result`; `lock` holds it (PostgreSQL).
 */
export const retryingSql = (d: SqlDialect, lock = ""): string => `SELECT d.id, d.lease_expires_at
    FROM ${d.q}task_deliveries AS d JOIN ${d.q}task_results AS r ON r.id = d.task_result_id
    WHERE d.task_result_id = @result AND d.closed_at IS NULL AND d.attempt > 0 AND r.status = 'pending' AND r.deadline_at > @now
    ORDER BY d.created_at, d.id LIMIT 1${lock}`;

/** The outbox row's columns under `alias`, with its payload (read from its own table, `p`). */
const joinedRow = (d: SqlDialect): string =>
  `${DELIVERIES.columns.map((c) => `d.${c}`).join(", ")}, p.payload FROM ${d.q}task_deliveries AS d JOIN ${d.q}task_delivery_payloads AS p ON p.delivery_id = d.id`;

/** An open row is due and untaken: due now and held by no live lease. */
const DUE = `due_at <= @now AND (lease_expires_at IS NULL OR lease_expires_at <= @now)`;

/**
 * The outbox's reads: a row by id, a result's rows in creation order (`task_deliveries_by_result`),
 * and over the open rows only (the partial indexes of open rows) the figures for metrics and health
 * checks and, decision D34, each pool's rows due and untaken. Counts are cast to integers
 * (PostgreSQL's bigint would arrive as a string).
 */
export const deliveryReadsSql = (d: SqlDialect) => ({
  get: `SELECT ${joinedRow(d)} WHERE d.id = @id`,
  byResult: `SELECT ${joinedRow(d)} WHERE d.task_result_id = @result ORDER BY d.created_at, d.id`,
  stats: `SELECT
      CAST(COALESCE(SUM(CASE WHEN ${DUE} THEN 1 ELSE 0 END), 0) AS integer) AS due,
      CAST(COALESCE(SUM(CASE WHEN lease_expires_at > @now THEN 1 ELSE 0 END), 0) AS integer) AS leased,
      MIN(CASE WHEN ${DUE} THEN due_at END) AS oldest_due_at,
      CAST(COALESCE(SUM(CASE WHEN attempt > 0 THEN 1 ELSE 0 END), 0) AS integer) AS retrying,
      MIN(CASE WHEN attempt > 0 THEN created_at END) AS oldest_retrying_at
    FROM ${d.q}task_deliveries WHERE closed_at IS NULL`,
  waitingByPool: `SELECT agent_pool_id, CAST(COUNT(*) AS integer) AS due, MIN(due_at) AS oldest_due_at FROM ${d.q}task_deliveries
    WHERE closed_at IS NULL AND agent_pool_id IS NOT NULL AND ${DUE}
    GROUP BY agent_pool_id ORDER BY agent_pool_id LIMIT @limit`,
});

/** What `stats` answers, as `TaskDeliveryStore.stats` says it. */
export function fromStatsRow(row: StatsRow | undefined): OutboxStats {
  return {
    due: row?.due ?? 0,
    leased: row?.leased ?? 0,
    oldestDueAt: row?.oldest_due_at ?? null,
    retrying: row?.retrying ?? 0,
    oldestRetryingAt: row?.oldest_retrying_at ?? null,
  };
}
export type StatsRow = { due: number; leased: number; oldest_due_at: string | null; retrying: number; oldest_retrying_at: string | null };

/** What `waitingByPool` answers, as `TaskDeliveryStore.waitingByPool` says it. */
export const fromBacklogRows = (rows: readonly BacklogRow[]): PoolBacklog[] =>
  rows.map((r) => ({ agentPoolId: r.agent_pool_id, due: r.due, oldestDueAt: r.oldest_due_at }));
export type BacklogRow = { agent_pool_id: string; due: number; oldest_due_at: string };
