import type { AuditEvent } from "../../src/schemas/audit.js";
import { isApplied, takeAuditEvent } from "../../src/storage/audit-scope.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";

/**
 * The few better-sqlite3 methods the adapter uses, typed structurally (the idea of Kysely's
 * `SqliteDatabase`): a host's `new Database(path)` fits without this package importing
 * better-sqlite3's types, so the published declarations never mention it.
 */
export interface SqliteDatabase {
  readonly open: boolean;
  readonly inTransaction: boolean;
  /** The file it opened (`:memory:` or `""` for a private database); read by the writer thread mode. */
  readonly name?: string;
  readonly memory?: boolean;
  prepare(source: string): SqliteStatement;
  exec(source: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  transaction<A extends any[], R>(fn: (...args: A) => R): SqliteTransaction<A, R>;
  /** Registers a SQL function on this connection (the audit store's digest, decision D59). */
  function(name: string, options: { deterministic?: boolean }, fn: (...args: any[]) => unknown): unknown;
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
 * decision D28: a lock another connection held past `busy_timeout` (`SQLITE_BUSY*`, or
 * `SQLITE_LOCKED*` for a shared-cache table), a full disk, an I/O error, a file that turned
 * read-only or cannot be opened are {@link StorageUnavailableError}: the write is rolled back whole
 * and may succeed when sent again. Null for every other failure.
 */
export function sqliteUnavailable(error: unknown): StorageUnavailableError | null {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code !== "string") return null;
  if (code.startsWith("SQLITE_BUSY")) return new StorageUnavailableError("database busy", code);
  if (code.startsWith("SQLITE_LOCKED")) return new StorageUnavailableError("database locked", code);
  // The disk, not the request: the same request succeeds once there is room or the disk is back.
  if (code === "SQLITE_FULL") return new StorageUnavailableError("disk full", code);
  if (code.startsWith("SQLITE_IOERR")) return new StorageUnavailableError("disk I/O error", code);
  if (code.startsWith("SQLITE_READONLY")) return new StorageUnavailableError("database is read-only", code);
  if (code.startsWith("SQLITE_CANTOPEN")) return new StorageUnavailableError("database file cannot be opened", code);
  return null;
}

/** Runs a transaction, turning a lock timeout into StorageUnavailableError (the one place each helper throws). */
function classified<R>(run: () => R): R {
  try {
    return run();
  } catch (error) {
    throw sqliteUnavailable(error) ?? error;
  }
}

/**
 * Wraps `fn` once (at construction, so its statements and BEGIN/COMMIT are prepared once) into a
 * function that runs it inside BEGIN IMMEDIATE: a check and the write that depends on it are one
 * step, and a writer waits on `busy_timeout` for the lock instead of failing on a stale snapshot.
 */
export function immediateTx<A extends any[], R>(db: SqliteDatabase, fn: (...args: A) => R, options: AuditedOptions = {}): (...args: A) => R {
  const tx = db.transaction(audited(db, fn));
  return (...args: A) => {
    const event = options.audited === false ? undefined : takeAuditEvent();
    return classified(() => tx.immediate(event, ...args));
  };
}

/** Whether a write takes the pending audit event (decision D53); the audit store's own writes do not. */
export interface AuditedOptions {
  audited?: boolean;
}

/** How each connection appends an audit event inside the current transaction (the audit store registers it). */
const auditAppenders = new WeakMap<SqliteDatabase, (event: AuditEvent) => unknown>();

export function appendAuditWith(db: SqliteDatabase, append: (event: AuditEvent) => unknown): void {
  auditAppenders.set(db, append);
}

/**
 * decision D53: `fn` with the pending audit event as its first argument; the event is appended in
 * the same transaction (savepoint) once `fn` returned an answer that applied, so a throw or a
 * refused guard leaves no event, and an event never stands without its change.
 */
function audited<A extends any[], R>(db: SqliteDatabase, fn: (...args: A) => R): (event: AuditEvent | undefined, ...args: A) => R {
  return (event, ...args) => {
    const result = fn(...args);
    if (event !== undefined && isApplied(result)) {
      const append = auditAppenders.get(db);
      if (!append) throw new Error("runplane sqlite: an audited write on a connection without the audit store");
      append(event);
    }
    return result;
  };
}

/** A read transaction: several SELECTs see one snapshot (a COUNT and its page agree). */
export function deferredTx<A extends any[], R>(db: SqliteDatabase, fn: (...args: A) => R): (...args: A) => R {
  const tx = db.transaction(fn);
  return (...args: A) => classified(() => tx.deferred(...args));
}

interface GroupedCall {
  run(): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Connections whose caller groups writes itself (the writer thread, decision D37): there every
 * grouped write runs at once, as a savepoint of the transaction its caller holds open.
 */
const groupedByCaller = new WeakSet<SqliteDatabase>();

/** Makes every {@link groupedTx} of `db` run at once instead of waiting for the turn's group. */
export function groupWritesOutside(db: SqliteDatabase): void {
  groupedByCaller.add(db);
}

/** One queue per connection, so every grouped write of every store shares the same commits. */
const queues = new WeakMap<SqliteDatabase, { calls: GroupedCall[]; flush: (calls: GroupedCall[]) => void }>();

/**
 * Like {@link immediateTx}, but the calls made during one turn of the event loop share one
 * BEGIN IMMEDIATE ... COMMIT (group commit). Under `synchronous=FULL` a small write costs its
 * commit's fsync, not its statements, so concurrent writers (a dispatcher's attempts, callbacks
 * arriving together, stages started together) pay one fsync per turn instead of one each. Each
 * call still runs whole and alone, inside its own savepoint: a throw rolls back only that call's
 * writes and rejects only its promise. Every promise settles after the COMMIT, so a resolved write
 * is exactly as durable as one made by `immediateTx`.
 */
export function groupedTx<A extends any[], R>(db: SqliteDatabase, fn: (...args: A) => R, options: AuditedOptions = {}): (...args: A) => Promise<R> {
  const tx = db.transaction(audited(db, fn));
  let queue = queues.get(db);
  if (!queue) {
    queue = { calls: [], flush: groupFlush(db) };
    queues.set(db, queue);
  }
  const { calls, flush } = queue;
  return (...args: A) =>
    new Promise<R>((resolve, reject) => {
      const event = options.audited === false ? undefined : takeAuditEvent();
      // The executor runs synchronously: the write happens inside the call, within the caller's transaction.
      if (groupedByCaller.has(db)) return resolve(classified(() => tx.immediate(event, ...args)));
      // setImmediate, not a microtask: answers that arrive in one poll phase of the event loop
      // each get their own microtask checkpoint, and only the check phase sees them all.
      if (calls.length === 0) setImmediate(() => flush(calls.splice(0)));
      calls.push({ run: () => tx.immediate(event, ...args), resolve: resolve as (value: unknown) => void, reject });
    });
}

function groupFlush(db: SqliteDatabase): (calls: GroupedCall[]) => void {
  const all = db.transaction((calls: GroupedCall[]) =>
    calls.map((call) => {
      try {
        return { ok: true as const, value: call.run() };
      } catch (error) {
        // SQLite rolled the whole transaction back itself (SQLITE_FULL, an I/O error): nothing of
        // the group stands, so every call fails rather than later ones running outside it.
        if (!db.inTransaction) throw error;
        return { ok: false as const, error };
      }
    }),
  );
  return (calls) => {
    let outcomes: ReturnType<typeof all.immediate>;
    try {
      outcomes = classified(() => all.immediate(calls));
    } catch (error) {
      for (const call of calls) call.reject(error);
      return;
    }
    outcomes.forEach((outcome, i) => (outcome.ok ? calls[i]!.resolve(outcome.value) : calls[i]!.reject(outcome.error)));
  };
}
