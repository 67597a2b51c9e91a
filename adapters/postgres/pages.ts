import type { Page } from "../../src/schemas/records.js";

/**
 * One page and the total of its filter in a single statement, so both come from one snapshot
 * (READ COMMITTED gives each statement its own) at the cost of one round trip. A page past the
 * end still yields one row, carrying the total and NULL columns. `where` and `order` are SQL over
 * the table's columns; the statement binds `@limit` and `@offset` besides the filter's names.
 */
export function pageOf(table: string, columns: string, where: string, order: string): string {
  const outerOrder = order
    .split(",")
    .map((term) => `p.${term.trim()}`)
    .join(", ");
  return `SELECT c.total, p.* FROM (SELECT count(*)::int AS total FROM ${table} WHERE ${where}) AS c
    LEFT JOIN LATERAL (SELECT ${columns} FROM ${table} WHERE ${where} ORDER BY ${order} LIMIT @limit OFFSET @offset) AS p ON true
    ORDER BY ${outerOrder}`;
}

/** A row of a `pageOf` statement: the table's row (NULL past the end) and the filter's total. */
export type PagedRow<Row> = Row & { total: number };

export function pageFrom<Row extends { id: unknown }, T>(rows: readonly PagedRow<Row>[], from: (row: Row) => T): Page<T> {
  const total = rows[0]?.total ?? 0;
  return { items: rows.filter((row) => row.id !== null).map(from), total };
}
