/**
 * SQL text that both SQL adapters write the same way. Statements bind named parameters
 * (`@column`): better-sqlite3 takes them as they are, the PostgreSQL adapter compiles them to `$n`
 * (postgres/driver.ts `sql`). A table name may carry a schema prefix (`"runplane".runs`).
 */

/** A table and its columns, listed once for the generated INSERT, UPDATE and SELECT lists. */
export interface TableColumns<Row> {
  table: string;
  columns: readonly (keyof Row & string)[];
}

/** `a, b, c`, optionally each prefixed with a table alias (`d.a, d.b`). */
export const columnList = <Row>({ columns }: TableColumns<Row>, alias?: string): string =>
  (alias ? columns.map((c) => `${alias}.${c}`) : columns).join(", ");

export const insertSql = <Row>(t: TableColumns<Row>): string =>
  `INSERT INTO ${t.table} (${columnList(t)}) VALUES (${t.columns.map((c) => `@${c}`).join(", ")})`;

/**
 * `UPDATE ... WHERE <key> = @<key>` plus `extra` guard SQL (named parameters), for compare-and-set.
 * `only` narrows SET to the columns a write may change: the database then leaves alone every index
 * whose columns are not assigned, which is most of the cost of a small update.
 */
export const updateSql = <Row>(t: TableColumns<Row>, extra = "", only?: readonly (keyof Row & string)[], key = "id"): string =>
  `UPDATE ${t.table} SET ${(only ?? t.columns.filter((c) => c !== key)).map((c) => `${c} = @${c}`).join(", ")} WHERE ${key} = @${key}${extra}`;

/**
 * Inserts a row unless its key or any unique column is taken. No conflict target, so every unique
 * constraint refuses alike; the changed-row count tells the caller which happened.
 */
export const insertIgnoreSql = <Row>(t: TableColumns<Row>): string => `${insertSql(t)} ON CONFLICT DO NOTHING`;

/**
 * A monotonic touch of `last_used_at` (token tables), in one statement: an instant already stored
 * that is later than `@at` is kept, so touches racing out of order never move it back. Both
 * databases compare the ISO-8601 text by code point (PostgreSQL through `COLLATE "C"` columns).
 */
export const touchSql = (table: string): string =>
  `UPDATE ${table} SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < @at THEN @at ELSE last_used_at END WHERE id = @id`;
