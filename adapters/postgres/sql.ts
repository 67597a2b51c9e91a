import type { SqlDialect } from "../sql/delivery-statements.js";
import { updateSql, type TableColumns } from "../sql/statements.js";

/**
 * Text that compares by code point: ids, keys and ISO-8601 timestamps order as the contract says
 * (plain code units) whatever the database's default collation.
 */
export const TEXT = `text COLLATE "C"`;

/** The SQLite adapter's column list of a table, with the table name qualified by the schema. */
export const qualified = <Row>(q: string, t: TableColumns<Row>): TableColumns<Row> => ({ ...t, table: `${q}${t.table}` });

/**
 * A compare-and-set UPDATE of the whole row (by `id`, only while `guard` holds) that also says
 * whether the row exists: `found` reads the statement's snapshot, taken before the UPDATE, so a
 * refusal tells `stale` from `missing` in the same round trip.
 */
export const casSql = <Row>(t: TableColumns<Row>, guard: string): string => `WITH updated AS (
    ${updateSql(t, ` AND ${guard}`)} RETURNING 1)
  SELECT EXISTS (SELECT 1 FROM updated) AS updated, EXISTS (SELECT 1 FROM ${t.table} WHERE id = @id) AS found`;

/** The guard of a status-and-version compare-and-set (`Expected`). */
export const EXPECTED = `version = @expected_version AND status = ANY(@expected_statuses::text[])`;

/**
 * Inserts any number of rows in one fixed statement: `@rows` is a JSON array of row objects (the
 * shared mappers' shape), typed by the table's own row type.
 */
export const insertManySql = <Row>(t: TableColumns<Row>): string =>
  `INSERT INTO ${t.table} (${t.columns.join(", ")})
    SELECT ${t.columns.join(", ")} FROM json_populate_recordset(NULL::${t.table}, @rows::json)`;

/**
 * decision D57: PostgreSQL's side of the shared batch statements (adapters/sql/delivery-statements.ts):
 * a JSON array parameter becomes a table through `json_to_recordset`, its text columns compared
 * by code point; a status is tested against a JSON array with `?`; RETURNING names columns by alias.
 */
export const pgDialect = (q: string): SqlDialect => ({
  q,
  // The LIMIT is the array's length: the planner otherwise takes a set-returning function for 100
  // rows and, on a table of a few thousand, prefers a sequential scan to 100 lookups by key.
  records: (param, alias, columns) =>
    `(SELECT * FROM json_to_recordset(@${param}::json) AS x(${columns.map(([c, type]) => `${c} ${type === "int" ? "int" : TEXT}`).join(", ")})
      LIMIT json_array_length(@${param}::json)) AS ${alias}`,
  inJson: (value, array) => `${array}::jsonb ? ${value}`,
  returning: (alias, column) => `RETURNING ${alias}.${column}`,
  // decision D27: rows another claim holds are passed over, never waited for.
  skipLocked: "\n    FOR UPDATE SKIP LOCKED",
});
