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

const BEGIN = /^\s*BEGIN\b/i;
const CONTROL = /^\s*(COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i;

/** Counts one statement sent as text: a transaction, a control statement, or a data statement. */
export function countStatement(count: StatementCount, text: string): void {
  if (BEGIN.test(text)) count.transactions++;
  else if (CONTROL.test(text)) count.control++;
  else {
    count.statements++;
    if (count.texts) count.texts.set(text, (count.texts.get(text) ?? 0) + 1);
  }
}

/**
 * A count kept in shared memory (the SQLite writer thread counts, a test on the main thread reads;
 * only the thread writes it).
 */
export function sharedStatementCount(buffer: SharedArrayBuffer): StatementCount {
  const cells = new Int32Array(buffer);
  const cell = (i: number) => ({ get: () => Atomics.load(cells, i), set: (value: number) => void Atomics.store(cells, i, value), enumerable: true });
  return Object.defineProperties({} as StatementCount, { statements: cell(0), transactions: cell(1), control: cell(2) });
}

export const newSharedStatementBuffer = (): SharedArrayBuffer => new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);

export const newStatementCount = (): StatementCount => ({ statements: 0, transactions: 0, control: 0 });

/** The counts since `before` (a copy taken with `{ ...count }`). */
export const countSince = (count: StatementCount, before: StatementCount): StatementCount => ({
  statements: count.statements - before.statements,
  transactions: count.transactions - before.transactions,
  control: count.control - before.control,
});
