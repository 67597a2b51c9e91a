import type { DeliveryAttemptRecord } from "../../src/schemas/delivery-attempts.js";
import type { Page, PageRequest } from "../../src/schemas/records.js";
import type { DeliveryAttemptStore } from "../../src/storage/attempts-types.js";
import { fromAttemptRow, type AttemptRow } from "../sql/attempt-rows.js";
import type { SqliteDatabase, SqliteStatement } from "./driver.js";
import { deferredTx, immediateTx } from "./driver.js";
import type { Migration } from "./migration.js";

/**
 * decision D31: delivery attempts, the newest 20 per result, one row per `(result, slot)`. No
 * foreign key to the result (the contract lets a record outlive what it refers to); the retention
 * sweep removes them by age.
 */
export const DELIVERY_ATTEMPTS_MIGRATION: Migration = {
  name: "0014-delivery-attempts",
  up: `
    CREATE TABLE delivery_attempts (
      task_result_id TEXT NOT NULL,
      slot INTEGER NOT NULL,
      id TEXT NOT NULL,
      delivery_id TEXT NOT NULL,
      number INTEGER NOT NULL,
      started_at TEXT NOT NULL,
      duration_ms INTEGER NOT NULL,
      outcome TEXT NOT NULL,
      status INTEGER,
      error_code TEXT,
      detail TEXT NOT NULL,
      excerpt TEXT,
      excerpt_truncated INTEGER NOT NULL CHECK (excerpt_truncated IN (0, 1)),
      PRIMARY KEY (task_result_id, slot)
    ) STRICT, WITHOUT ROWID;
    -- A result's attempts page newest first from this index; the retention sweep reads the next.
    CREATE INDEX delivery_attempts_by_result ON delivery_attempts (task_result_id, started_at, number, id);
    CREATE INDEX delivery_attempts_by_start ON delivery_attempts (started_at);
  `,
};

/** decision D58: an attempt keeps the name of the agent that took it, for its `no-report` words. */
export const ATTEMPT_AGENT_NAMES_MIGRATION: Migration = {
  name: "0021-attempt-agent-names",
  up: `ALTER TABLE delivery_attempts ADD COLUMN agent_name TEXT;`,
};

/** The statements, exported so the adapter tests can check their query plans. */
export const ATTEMPT_SQL = {
  count: `SELECT COUNT(*) AS total FROM delivery_attempts WHERE task_result_id = ?`,
  page: `SELECT * FROM delivery_attempts WHERE task_result_id = ? ORDER BY started_at DESC, number DESC, id DESC LIMIT ? OFFSET ?`,
  prune: `DELETE FROM delivery_attempts WHERE (task_result_id, slot) IN
    (SELECT task_result_id, slot FROM delivery_attempts WHERE started_at < ? ORDER BY started_at LIMIT ?)`,
} as const;

/** The attempts' reads and pruning; `settle` writes them (decision D57, delivery-statements.ts). */
export type SqliteAttemptStore = DeliveryAttemptStore;

export function createAttemptStore(db: SqliteDatabase): SqliteAttemptStore {
  const s = Object.fromEntries(Object.entries(ATTEMPT_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Record<keyof typeof ATTEMPT_SQL, SqliteStatement>;
  // One snapshot: the page and its total agree.
  const list = deferredTx(db, (taskResultId: string, request: PageRequest): Page<DeliveryAttemptRecord> => ({
    items: (s.page.all(taskResultId, request.limit, request.offset) as AttemptRow[]).map(fromAttemptRow),
    total: (s.count.get(taskResultId) as { total: number }).total,
  }));
  const prune = immediateTx(db, (before: string, limit: number): number => s.prune.run(before, limit).changes);
  return {
    list: async (taskResultId, request) => list(taskResultId, request),
    prune: async (before, limit) => prune(before, Math.max(0, limit)),
  };
}
