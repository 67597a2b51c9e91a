import { createRevisionStore } from "./revisions.js";
import type { Storage } from "../../src/storage/types.js";
import { importOptional } from "../../src/optional-peer.js";
import { createAgentTokenStore } from "./agent-tokens.js";
import { createApiTokenStore } from "./api-tokens.js";
import { createDirectoryStores } from "./directory.js";
import type { SqliteDatabase } from "./driver.js";
import { migrate } from "./schema.js";
import { createVariableStore } from "./variables.js";
import { createSealedValueStore } from "./sealed-values.js";
import { createSqliteTeamProjectStore } from "./team-projects.js";
import { createRunTaskStores } from "./run-tasks.js";
import { createTaskStageStores } from "./task-stages.js";
import { createCommentStore } from "./comments.js";
import { createHostStore } from "./hosts.js";
import { createSqliteAuditStore } from "./audit.js";
import { resolveSqliteOptions, type SqliteStorageOptions } from "./options.js";
import { createWriterThreadStorage, writerThreadOf } from "./writer-client.js";

export type { SqliteDatabase, SqliteStatement, SqliteTransaction } from "./driver.js";

export { SQLITE_SYNCHRONOUS_MODES, SQLITE_WRITER_MODES } from "./options.js";
export type { SqliteStorageOptions, SqliteSynchronousMode, SqliteWriterMode } from "./options.js";

/**
 * A `Storage` over a better-sqlite3 database the host opened (`new Database(path)`), typed
 * structurally so this package never needs better-sqlite3's types.
 *
 * It sets `journal_mode=WAL`, `synchronous` (`FULL` by default), `foreign_keys=ON` and
 * `busy_timeout`, then applies pending schema migrations (tracked in `PRAGMA user_version`, one
 * transaction each). Every write runs in `BEGIN IMMEDIATE`; statements are prepared once here.
 * The storage takes ownership of `db`: `storage.close()` closes it.
 *
 * With `writer: "thread"` (decision D37) `db` is migrated, then only read from (`query_only`); a
 * worker thread opens the same file and commits every write, so a slow fsync never stops this
 * thread. The default here is `in-thread`, which commits on this thread: `db` is the caller's, who
 * may write through it too (`openSqliteStorage`, which owns its connections, defaults to the thread).
 *
 * @throws when an option is invalid, a migration fails (it is rolled back), the file was
 *   migrated by a newer runplane, or `writer: "thread"` is asked of an in-memory database.
 */
export function createSqliteStorage(db: SqliteDatabase, options: SqliteStorageOptions = {}): Storage {
  const { synchronous, busyTimeoutMs, writer, writeTimeoutMs } = resolveSqliteOptions(options);
  if (writer === "thread" && (db.memory === true || !db.name || db.name === ":memory:")) {
    throw new TypeError('createSqliteStorage: writer "thread" needs a database file (a second connection cannot see :memory:)');
  }

  db.pragma("journal_mode = WAL"); // stays "memory" for :memory: databases
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma("foreign_keys = ON");
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  // Every grouped write runs in a savepoint, whose sub-journal SQLite keeps in a temporary file by
  // default: in memory, 1,000 stage starts take 1.3 s instead of 2.0 s (the sub-journal holds only
  // the pages one call changed, and is gone at its release).
  db.pragma("temp_store = MEMORY");
  migrate(db);
  const local = createStores(db);
  if (writer === "in-thread") return local;
  db.pragma("query_only = ON");
  return createWriterThreadStorage(local, { path: db.name!, synchronous, busyTimeoutMs }, { script: options.writerScript, writeTimeoutMs });
}

function createStores(db: SqliteDatabase): Storage {
  return {
    ...createDirectoryStores(db),
    apiTokens: createApiTokenStore(db),
    variables: createVariableStore(db),
    sealedValues: createSealedValueStore(db),
    agentTokens: createAgentTokenStore(db),
    teamProjects: createSqliteTeamProjectStore(db),
    comments: createCommentStore(db),
    hosts: createHostStore(db),
    ...createRunTaskStores(db),
    ...createTaskStageStores(db),
    revisions: createRevisionStore(db),
    audit: createSqliteAuditStore(db),
    async close() {
      if (db.open) db.close();
    },
  };
}

/**
 * Opens (creating if needed) the SQLite file at `path` with better-sqlite3, an optional peer
 * dependency loaded only here, and returns a `Storage` that owns the connection: `close()` closes
 * it. `":memory:"` gives a private in-memory database.
 *
 * Writes commit in a writer thread by default here (decision D37): the connections are the
 * storage's own, so nothing else writes through the one it makes read-only. `writer: "in-thread"`
 * keeps one thread (the event loop then waits for every fsync); `":memory:"` is always in-thread.
 * Resolves once the writer thread has opened the file.
 */
export async function openSqliteStorage(path: string, options: SqliteStorageOptions = {}): Promise<Storage> {
  const { default: Database } = await importOptional(() => import("better-sqlite3"), "better-sqlite3", "openSqliteStorage");
  const db = new Database(path);
  const inMemory = path === ":memory:" || path === "";
  let storage: Storage;
  try {
    storage = createSqliteStorage(db, { writer: inMemory ? "in-thread" : "thread", ...options });
  } catch (error) {
    db.close();
    throw error;
  }
  try {
    await writerThreadOf(storage)?.ready;
  } catch (error) {
    await storage.close();
    throw error;
  }
  return storage;
}
