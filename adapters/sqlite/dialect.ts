import type { SqlDialect } from "../sql/delivery-statements.js";

/**
 * decision D57: SQLite's side of the shared batch statements. A JSON array parameter becomes a
 * table through `json_each`, one `json_extract` per column (the values keep their JSON types:
 * text, integer, null); RETURNING may name only the updated table's own columns, bare.
 */
export const SQLITE_DIALECT: SqlDialect = {
  q: "",
  records: (param, alias, columns) =>
    `(SELECT ${columns.map(([c]) => `json_extract(value, '$.${c}') AS ${c}`).join(", ")} FROM json_each(@${param})) AS ${alias}`,
  inJson: (value, array) => `${value} IN (SELECT value FROM json_each(${array}))`,
  returning: (_alias, column) => `RETURNING ${column}`,
  // BEGIN IMMEDIATE: one writer at a time, so no row is held by another claim while this one picks.
  skipLocked: "",
};
