import type { DeliveryAttemptStore } from "../../src/storage/attempts-types.js";
import { ATTEMPTS, fromAttemptRow, type AttemptRow } from "../sql/attempt-rows.js";
import { columnList } from "../sql/statements.js";
import type { PgPoolLike } from "./driver.js";
import { changed, rowsOf, sql } from "./driver.js";
import { pageFrom, pageOf, type PagedRow } from "./pages.js";
import type { PgMigration } from "./migration.js";
import { TEXT } from "./sql.js";

/**
 * decision D31: delivery attempts, the newest 20 per result, one row per `(result, slot)`; the
 * outbox's settle statement upserts them (task-deliveries.ts), the retention sweep deletes by age.
 */
export const DELIVERY_ATTEMPTS_MIGRATION: PgMigration = {
  name: "0011-delivery-attempts",
  up: (q) => `
    CREATE TABLE ${q}delivery_attempts (
      task_result_id ${TEXT} NOT NULL, slot integer NOT NULL, id ${TEXT} NOT NULL, delivery_id ${TEXT} NOT NULL,
      number integer NOT NULL, started_at ${TEXT} NOT NULL, duration_ms integer NOT NULL, outcome ${TEXT} NOT NULL,
      status integer, error_code ${TEXT}, detail ${TEXT} NOT NULL, excerpt ${TEXT},
      excerpt_truncated integer NOT NULL CHECK (excerpt_truncated IN (0, 1)),
      PRIMARY KEY (task_result_id, slot));
    -- A result's attempts page newest first from this index; the retention sweep reads the next.
    CREATE INDEX delivery_attempts_by_result ON ${q}delivery_attempts (task_result_id, started_at, number, id);
    CREATE INDEX delivery_attempts_by_start ON ${q}delivery_attempts (started_at);
  `,
};

/** decision D58: an attempt keeps the name of the agent that took it, for its `no-report` words. */
export const ATTEMPT_AGENT_NAMES_MIGRATION: PgMigration = {
  name: "0018-attempt-agent-names",
  up: (q) => `ALTER TABLE ${q}delivery_attempts ADD COLUMN agent_name ${TEXT};`,
};

export function createAttemptStore(pool: PgPoolLike, q: string): DeliveryAttemptStore {
  const table = `${q}delivery_attempts`;
  const s = {
    page: sql(pageOf(table, columnList(ATTEMPTS), "task_result_id = @result", "started_at DESC, number DESC, id DESC")),
    prune: sql(`DELETE FROM ${table} WHERE (task_result_id, slot) IN
      (SELECT task_result_id, slot FROM ${table} WHERE started_at < @before ORDER BY started_at LIMIT @limit)`),
  };
  return {
    list: async (taskResultId, request) => pageFrom(await rowsOf<PagedRow<AttemptRow>>(pool, s.page, { result: taskResultId, ...request }), fromAttemptRow),
    prune: async (before, limit) => changed(pool, s.prune, { before, limit: Math.max(0, limit) }),
  };
}
