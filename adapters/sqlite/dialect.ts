import type { Column, SqlDialect } from "../sql/delivery-statements.js";
import type { SqliteDatabase, SqliteStatement } from "./driver.js";

/**
 * decision D57: SQLite's side of the shared batch statements. A batch's rows are bound as a
 * `VALUES` list of `?` (so a statement's text follows the batch's size): SQLite decoding the same
 * rows from JSON (`json_each`, a `json_extract` per column) cost more CPU than the statements it
 * saved. A status is tested against a JSON array with `json_each`; RETURNING may name only the
 * updated table's own columns, bare; one writer at a time (BEGIN IMMEDIATE), so nothing to skip.
 */
export const sqliteDialect = (rows: number): SqlDialect => ({
  q: "",
  records: (_param, alias, columns) => {
    const row = `(${columns.map(() => "?").join(", ")})`;
    return `(SELECT ${columns.map(([c], i) => `column${i + 1} AS ${c}`).join(", ")} FROM (VALUES ${Array.from({ length: rows }, () => row).join(", ")})) AS ${alias}`;
  },
  inJson: (value, array) => `${value} IN (SELECT value FROM json_each(${array}))`,
  returning: (_alias, column) => `RETURNING ${column}`,
  skipLocked: "",
});

/** The dialect of the statements that take no batch (and of a batch of one). */
export const SQLITE_DIALECT = sqliteDialect(1);

/** Batch sizes whose statements are kept prepared, per statement; past it the cache starts over. */
const SIZES_KEPT = 64;

/**
 * A shared batch statement (`build`) whose input has `columns`, prepared once per batch size:
 * `(rows).run()` / `.all()` binds the rows' values in column order.
 */
export function batchStatement(db: SqliteDatabase, build: (d: SqlDialect) => string, columns: readonly Column[]) {
  const prepared = new Map<number, SqliteStatement>();
  return (rows: readonly object[]) => {
    let statement = prepared.get(rows.length);
    if (!statement) {
      if (prepared.size >= SIZES_KEPT) prepared.clear();
      statement = db.prepare(build(sqliteDialect(rows.length)));
      prepared.set(rows.length, statement);
    }
    const values = rows.flatMap((r) => columns.map(([c]) => (r as Record<string, unknown>)[c] ?? null));
    const bound = statement;
    return { run: () => bound.run(values), all: () => bound.all(values) };
  };
}
