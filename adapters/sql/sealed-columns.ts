import type { SealedColumn } from "../../src/storage/sealed-values.js";

/** Where a SQL schema keeps one kind of sealed value. */
export interface SqlSealedColumn {
  table: string;
  column: string;
  /** The column holding the id the value is bound to (its row binding's id). */
  id: string;
  /** Which rows hold a sealed value in `column` (the others hold plaintext or NULL). */
  holds: string;
}

/**
 * decision D29: the one list of sealed columns of both SQL schemas (SQLite and PostgreSQL name their
 * tables and columns alike). `sealedValues` scans and re-seals exactly these, and a test reads each
 * schema and finds every column holding a sealed value, so a sealed column this list misses fails.
 */
export const SQL_SEALED_COLUMNS = {
  "vars.value": { table: "variables", column: "value", id: "id", holds: "sensitive = 1" },
  "tasks.hmac_key": { table: "run_tasks", column: "hmac_key", id: "id", holds: "hmac_key IS NOT NULL" },
  // Moved out of task_deliveries by the batched outbox; once forgotten by reencrypt (D29 lists it here).
  "task_deliveries.payload": { table: "task_delivery_payloads", column: "payload", id: "delivery_id", holds: "payload IS NOT NULL" },
} as const satisfies Record<SealedColumn, SqlSealedColumn>;

/** Statement texts for one sealed column, with `@name` parameters; `q` is the schema prefix (`"s".` or ""). */
export function sealedColumnSql(q: string, c: SqlSealedColumn) {
  // substr(x, 1, @head) with a huge head is the whole value: one statement serves both scans.
  const select = `SELECT ${c.id} AS id, substr(${c.column}, 1, @head) AS value FROM ${q}${c.table} WHERE ${c.holds}`;
  return {
    first: `${select} ORDER BY ${c.id} LIMIT @limit`,
    after: `${select} AND ${c.id} > @after ORDER BY ${c.id} LIMIT @limit`,
    replace: `UPDATE ${q}${c.table} SET ${c.column} = @next WHERE ${c.id} = @id AND ${c.holds} AND ${c.column} = @expected`,
  };
}

/** `head` for a scan that wants whole values. */
export const WHOLE = 2_147_483_647;
