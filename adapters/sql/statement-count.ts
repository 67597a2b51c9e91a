/**
 * decision D56: what the statement budget tests count, the same way for both SQL drivers.
 * - `statements`: data statements the adapter has the driver execute (SQLite: each run/get/all of
 *   a prepared statement, each exec and pragma; PostgreSQL: each query other than transaction
 *   control). A statement run once for many rows counts once: batching is what lowers the count.
 * - `transactions`: transactions opened (SQLite: an outermost BEGIN; PostgreSQL: a BEGIN), and
 *   `control` the other control round trips (COMMIT, ROLLBACK, SAVEPOINT, RELEASE; SQLite's
 *   savepoints of grouped writes), counted apart so batching statements into fewer transactions
 *   shows too.
 * Counting is a wrapper a test puts around the connection or the pool it hands the adapter: the
 * adapter itself carries no counter, so it costs nothing when no test asks.
 */
export interface StatementCount {
  statements: number;
  transactions: number;
  control: number;
  /** When present, how often each statement's text ran (to see which statements a budget spends). */
  texts?: Map<string, number>;
}

/** Counts one data statement, by its text when `count.texts` asks for that. */
export function countStatement(count: StatementCount, text: string): void {
  count.statements++;
  if (count.texts) count.texts.set(text, (count.texts.get(text) ?? 0) + 1);
}

export const newStatementCount = (): StatementCount => ({ statements: 0, transactions: 0, control: 0 });

/** The counts since `before` (a copy taken with `{ ...count }`). */
export const countSince = (count: StatementCount, before: StatementCount): StatementCount => ({
  statements: count.statements - before.statements,
  transactions: count.transactions - before.transactions,
  control: count.control - before.control,
});
