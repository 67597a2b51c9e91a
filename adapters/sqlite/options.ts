export const SQLITE_SYNCHRONOUS_MODES = ["FULL", "EXTRA", "NORMAL"] as const;
export type SqliteSynchronousMode = (typeof SQLITE_SYNCHRONOUS_MODES)[number];

export const SQLITE_WRITER_MODES = ["in-thread", "thread"] as const;
export type SqliteWriterMode = (typeof SQLITE_WRITER_MODES)[number];

export interface SqliteStorageOptions {
  /**
   * `PRAGMA synchronous`. Default `FULL`: a write whose promise resolved survives a power loss.
   * `NORMAL` is several times faster for one-row commits under WAL but may lose the last commits
   * (never corrupt the file) on power loss.
   */
  synchronous?: SqliteSynchronousMode;
  /** How long, in milliseconds, a writer waits for another connection's lock. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * Where writes commit (decision D37). `in-thread` (the default of `createSqliteStorage`, whose
   * connection is the caller's): on the calling thread, so a slow fsync stops the whole event loop
   * for its duration; one thread, nothing to start. `thread` (the default of `openSqliteStorage`
   * for a file):
   * a worker thread owns a second connection to the same file and commits every write there,
   * calls that arrive during a commit sharing the next one (group commit); the given connection
   * only reads (`query_only`), so reads never wait for the disk. Needs a database file, not
   * `:memory:`. Every write resolves once committed, exactly as durable as in-thread; if the
   * thread dies, writes reject with `StorageUnavailableError` (503) until the process restarts.
   */
  writer?: SqliteWriterMode;
  /**
   * With `writer: "thread"`: the thread's script, as a path or `file:` URL. Needed only when the
   * service is bundled into one file (esbuild, webpack), where the package's own
   * `dist/adapters/sqlite-writer.js` is not next to the code any more: copy that file beside the
   * bundle and name it here. Default: found next to the adapter.
   */
  writerScript?: string | URL;
  /**
   * With `writer: "thread"`: how long, in milliseconds, a write waits for the thread's answer before
   * it fails with `StorageUnavailableError` (503), and how long `close()` waits for the thread. A disk
   * that stalls (a frozen or hung file system) or a lock held elsewhere then costs a bounded wait,
   * not a hang. A write that timed out is never run (decision D39): the thread skips it, and one
   * the thread had already started is awaited one more `writeTimeoutMs` (only a disk stalled past
   * that leaves it unknown, as a connection cut after COMMIT). Default
   * `busyTimeoutMs + 5000` (10 s with the defaults).
   */
  writeTimeoutMs?: number;
}

/** The options with their defaults, or a TypeError: synchronous and the timeout end up inside PRAGMA text. */
export function resolveSqliteOptions(options: SqliteStorageOptions): Required<Omit<SqliteStorageOptions, "writerScript">> {
  const synchronous = options.synchronous ?? "FULL";
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const writeTimeoutMs = options.writeTimeoutMs ?? busyTimeoutMs + 5000;
  const writer = options.writer ?? "in-thread";
  if (!SQLITE_SYNCHRONOUS_MODES.includes(synchronous)) {
    throw new TypeError(`createSqliteStorage: synchronous must be one of ${SQLITE_SYNCHRONOUS_MODES.join(", ")}`);
  }
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new TypeError("createSqliteStorage: busyTimeoutMs must be a non-negative integer");
  }
  if (!SQLITE_WRITER_MODES.includes(writer)) {
    throw new TypeError(`createSqliteStorage: writer must be one of ${SQLITE_WRITER_MODES.join(", ")}`);
  }
  if (!Number.isSafeInteger(writeTimeoutMs) || writeTimeoutMs < 1) {
    throw new TypeError("createSqliteStorage: writeTimeoutMs must be a positive integer");
  }
  return { synchronous, busyTimeoutMs, writer, writeTimeoutMs };
}
