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

export type { SqliteDatabase, SqliteStatement, SqliteTransaction } from "./driver.js";

export const SQLITE_SYNCHRONOUS_MODES = ["FULL", "EXTRA", "NORMAL"] as const;
export type SqliteSynchronousMode = (typeof SQLITE_SYNCHRONOUS_MODES)[number];

export interface SqliteStorageOptions {
  /**
   * `PRAGMA synchronous`. Default `FULL`: a write whose promise resolved survives a power loss.
   * `NORMAL` is several times faster for one-row commits under WAL but may lose the last commits
   * (never corrupt the file) on power loss.
   */
  synchronous?: SqliteSynchronousMode;
  /** How long, in milliseconds, a writer waits for another connection's lock. Default 5000. */
  busyTimeoutMs?: number;
}

/**
 * A `Storage` over a better-sqlite3 database the host opened (`new Database(path)`), typed
 * structurally so this package never needs better-sqlite3's types.
 *
 * It sets `journal_mode=WAL`, `synchronous` (`FULL` by default), `foreign_keys=ON` and
 * `busy_timeout`, then applies pending schema migrations (tracked in `PRAGMA user_version`, one
 * transaction each). Every write runs in `BEGIN IMMEDIATE`; statements are prepared once here.
 * The storage takes ownership of `db`: `storage.close()` closes it.
 *
 * @throws when an option is invalid, a migration fails (it is rolled back), or the file was
 *   migrated by a newer runplane.
 */
export function createSqliteStorage(db: SqliteDatabase, options: SqliteStorageOptions = {}): Storage {
  const synchronous = options.synchronous ?? "FULL";
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  // Both end up inside PRAGMA text, so only known values get there.
  if (!SQLITE_SYNCHRONOUS_MODES.includes(synchronous)) {
    throw new TypeError(`createSqliteStorage: synchronous must be one of ${SQLITE_SYNCHRONOUS_MODES.join(", ")}`);
  }
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new TypeError("createSqliteStorage: busyTimeoutMs must be a non-negative integer");
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
    async close() {
      if (db.open) db.close();
    },
  };
}

/**
 * Opens (creating if needed) the SQLite file at `path` with better-sqlite3, an optional peer
 * dependency loaded only here, and returns a `Storage` that owns the connection: `close()` closes
 * it. `":memory:"` gives a private in-memory database.
 */
export async function openSqliteStorage(path: string, options: SqliteStorageOptions = {}): Promise<Storage> {
  const { default: Database } = await importOptional(() => import("better-sqlite3"), "better-sqlite3", "openSqliteStorage");
  const db = new Database(path);
  try {
    return createSqliteStorage(db, options);
  } catch (error) {
    db.close();
    throw error;
  }
}
