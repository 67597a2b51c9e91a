/**
 * The few better-sqlite3 methods the adapter uses, typed structurally (the idea of Kysely's
 * `SqliteDatabase`): a host's `new Database(path)` fits without this package importing
 * better-sqlite3's types, so the published declarations never mention it.
 */
export interface SqliteDatabase {
  readonly open: boolean;
  prepare(source: string): SqliteStatement;
  exec(source: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  transaction<A extends any[], R>(fn: (...args: A) => R): SqliteTransaction<A, R>;
  close(): unknown;
}

export interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** A wrapped transaction function; the adapter writes only through `immediate` (BEGIN IMMEDIATE). */
export interface SqliteTransaction<A extends any[], R> {
  deferred(...args: A): R;
  immediate(...args: A): R;
}

/** True for a UNIQUE index violation (not a PRIMARY KEY one, which better-sqlite3 codes apart). */
export function isUniqueViolation(error: unknown): boolean {
  return hasCode(error, "SQLITE_CONSTRAINT_UNIQUE");
}

export function isPrimaryKeyViolation(error: unknown): boolean {
  return hasCode(error, "SQLITE_CONSTRAINT_PRIMARYKEY");
}

function hasCode(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}

/**
 * Wraps `fn` once (at construction, so its statements and BEGIN/COMMIT are prepared once) into a
 * function that runs it inside BEGIN IMMEDIATE: a check and the write that depends on it are one
 * step, and a writer waits on `busy_timeout` for the lock instead of failing on a stale snapshot.
 */
export function immediateTx<A extends any[], R>(db: SqliteDatabase, fn: (...args: A) => R): (...args: A) => R {
  const tx = db.transaction(fn);
  return (...args: A) => tx.immediate(...args);
}

/** A read transaction: several SELECTs see one snapshot (a COUNT and its page agree). */
export function deferredTx<A extends any[], R>(db: SqliteDatabase, fn: (...args: A) => R): (...args: A) => R {
  const tx = db.transaction(fn);
  return (...args: A) => tx.deferred(...args);
}
