import { countStatement, newStatementCount, type StatementCount } from "../sql/statement-count.js";
import type { SqliteDatabase, SqliteStatement, SqliteTransaction } from "./driver.js";

/**
 * decision D56: `db` as the adapter sees it, counting every statement it executes and every
 * transaction it opens into `count`. For tests (the statement budgets): hand the wrapper to
 * `createSqliteStorage` instead of `db`. The writer thread (D37) wraps its own connection so when
 * its start carries a shared count (`WriterStart.statementCount`).
 */
export function countingSqlite(db: SqliteDatabase, count: StatementCount = newStatementCount()): { db: SqliteDatabase; count: StatementCount } {
  const statement = (inner: SqliteStatement, source: string): SqliteStatement => ({
    run: (...params) => (countStatement(count, source), inner.run(...params)),
    get: (...params) => (countStatement(count, source), inner.get(...params)),
    all: (...params) => (countStatement(count, source), inner.all(...params)),
  });
  // better-sqlite3 opens a savepoint instead of a transaction when one is already open.
  const opened = (): void => void (db.inTransaction ? count.control++ : count.transactions++);
  const wrapped: SqliteDatabase = {
    get open() {
      return db.open;
    },
    get inTransaction() {
      return db.inTransaction;
    },
    get name() {
      return db.name;
    },
    get memory() {
      return db.memory;
    },
    prepare: (source) => statement(db.prepare(source), source),
    exec: (source) => (countStatement(count, source), db.exec(source)),
    pragma: (source, options) => (countStatement(count, `PRAGMA ${source}`), db.pragma(source, options)),
    transaction<A extends any[], R>(fn: (...args: A) => R): SqliteTransaction<A, R> {
      const tx = db.transaction(fn);
      return {
        deferred: (...args: A) => (opened(), tx.deferred(...args)),
        immediate: (...args: A) => (opened(), tx.immediate(...args)),
      };
    },
    function: (name, options, fn) => db.function(name, options, fn),
    close: () => db.close(),
  };
  return { db: wrapped, count };
}
