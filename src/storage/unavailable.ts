/**
 * decision D28: what a storage adapter throws when its database cannot be reached right now (the
 * connection refused, reset or terminated by an administrator, a pool or lock timeout), as opposed
 * to a statement that failed. The API answers it with 503 and `Retry-After` on every route, and
 * `health()` reports it: the request may succeed if sent again once the database is back.
 *
 * `reason` is short and safe to show (`connection refused`, `database busy`): never a host, a
 * statement or a value. `code` is the driver's code it was recognised by (`ECONNREFUSED`, a
 * SQLSTATE such as `57P01`, `SQLITE_BUSY`), for logs.
 */
export class StorageUnavailableError extends Error {
  override readonly name = "StorageUnavailableError";
  readonly reason: string;
  readonly code: string | undefined;

  constructor(reason: string, code?: string) {
    super(`storage unavailable: ${reason}`);
    this.reason = reason;
    this.code = code;
  }
}

/** True for a {@link StorageUnavailableError}, also one from another copy of runplane (by `name`). */
export function isStorageUnavailableError(value: unknown): value is StorageUnavailableError {
  return (
    value instanceof StorageUnavailableError ||
    (value instanceof Error && value.name === "StorageUnavailableError" && typeof (value as { reason?: unknown }).reason === "string")
  );
}

/**
 * Codes of a database that answers but could not finish in time: a lock wait past `lock_timeout`
 * (55P03), a statement canceled at its deadline (57014), SQLite's busy or locked file, the writer
 * thread's queue full. A health check calls that storage busy, not unreachable.
 */
const BUSY_CODES = /^(55P03|57014|SQLITE_BUSY|SQLITE_LOCKED|WRITER_THREAD_FULL)/;

/** Whether `error` says the database answered but was busy (a lock, load), not that it is away. */
export const isStorageBusyError = (error: StorageUnavailableError): boolean => BUSY_CODES.test(error.code ?? "");
