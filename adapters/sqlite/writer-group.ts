import { sqliteUnavailable, type SqliteDatabase } from "./driver.js";
import { toWireError, type Outcome } from "./writer-protocol.js";

/** One write call as the writer thread runs it: an id to answer under, and the call itself. */
export interface GroupCall {
  id: number;
  /** decision D39: false when the caller was already answered 503 (writer-slots.ts): the call is skipped. */
  claim?(): boolean;
  run(): Promise<unknown>;
}

/** The answer of a skipped call: its caller already had its 503 and drops it (not a storage failure for health). */
const cancelled = (id: number): Outcome => ({ id, ok: false, error: { name: "WriteCancelled", message: "cancelled before it ran" } });

/**
 * Group commit (decision D37): runs `calls` in one BEGIN IMMEDIATE ... COMMIT, each in its own
 * savepoint, so a call that throws rolls back only its own writes and fails only itself; the
 * adapter's own transactions nest inside as savepoints (better-sqlite3 does that when a transaction
 * is open). Resolves one outcome per call once COMMIT returned, so every `ok` is durable. A call
 * must do its SQL before it awaits anything but its own statements (the adapter's writes do, with
 * `groupWritesOutside`).
 */
export function createGroupCommit(db: SqliteDatabase): (calls: readonly GroupCall[]) => Promise<Outcome[]> {
  const statements = Object.fromEntries(
    ["BEGIN IMMEDIATE", "COMMIT", "ROLLBACK", "SAVEPOINT call", "RELEASE call", "ROLLBACK TO call"].map((text) => [text, db.prepare(text)]),
  );
  const exec = (text: string): void => void statements[text]!.run();
  const failed = (id: number, error: unknown): Outcome => ({ id, ok: false, error: toWireError(sqliteUnavailable(error) ?? error) });
  const failAll = (calls: readonly GroupCall[], error: unknown) => calls.map((call) => failed(call.id, error));

  return async (calls) => {
    try {
      exec("BEGIN IMMEDIATE");
    } catch (error) {
      return failAll(calls, error); // another connection held the lock past busy_timeout: 503 (D28)
    }
    const outcomes: Outcome[] = [];
    for (const call of calls) {
      // Claimed only now, inside the open transaction: a caller answered 503 while the thread
      // waited for the lock (BEGIN IMMEDIATE) is skipped, never run.
      if (call.claim && !call.claim()) {
        outcomes.push(cancelled(call.id));
        continue;
      }
      exec("SAVEPOINT call");
      try {
        const value = await call.run();
        exec("RELEASE call");
        outcomes.push({ id: call.id, ok: true, value });
      } catch (error) {
        // SQLite rolled the whole transaction back itself (SQLITE_FULL, an I/O error): nothing of
        // the group stands, so every call of it fails.
        if (!db.inTransaction) return failAll(calls, error);
        exec("ROLLBACK TO call");
        exec("RELEASE call");
        outcomes.push(failed(call.id, error));
      }
    }
    try {
      exec("COMMIT");
    } catch (error) {
      if (db.inTransaction) exec("ROLLBACK");
      return failAll(calls, error);
    }
    return outcomes;
  };
}
