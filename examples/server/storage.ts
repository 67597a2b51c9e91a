import { chmodSync, closeSync, openSync } from "node:fs";
import type pg from "pg";
import { createPostgresStorage, SILENT_DATABASE_POOL_OPTIONS } from "../../adapters/postgres/index.js";
import { openSqliteStorage } from "../../adapters/sqlite/index.js";
import type { Storage } from "../../src/index.js";
import { importOptional } from "../../src/optional-peer.js";

/**
 * Where the reference server stores: PostgreSQL when `DATABASE_URL` is a `postgres://` URL (any
 * number of hosts may share it, decision D27), else the embedded SQLite file in DATA_DIR.
 */
export interface ServerStorage {
  storage: Storage;
  /** What the start banner says, e.g. `SQLite file data/runplane.db` (never the URL: it may hold a password). */
  description: string;
  /**
   * Runs `fn` while no other host on the same database runs its own startup step: the demo data,
   * the demo tasks and the owners token are then checked and written once, however many hosts
   * start together. On SQLite (one host per file) it just runs `fn`.
   */
  exclusively<T>(fn: () => Promise<T>): Promise<T>;
  /** Ends what `storage.close()` leaves open (the PostgreSQL pool). Call after the runplane closed. */
  close(): Promise<void>;
}

export interface ServerStorageOptions {
  /** `DATABASE_URL`; SQLite when absent or empty. */
  databaseUrl?: string | undefined;
  /** `DATABASE_SCHEMA`: the PostgreSQL schema holding runplane's tables. Default `public`. */
  schema?: string | undefined;
  /** `DATABASE_POOL_SIZE`: connections this host may open. Default 10 (node-postgres' default). */
  poolSize?: number | undefined;
  /** The SQLite file used without a database URL; created (or tightened to) mode 0600. */
  sqlitePath: string;
}

export async function openServerStorage(options: ServerStorageOptions): Promise<ServerStorage> {
  const url = options.databaseUrl?.trim();
  if (!url) {
    // 0600 before SQLite opens it (an empty file becomes a new database); SQLite creates the -wal
    // and -shm files, on first write, with the database file's own mode.
    closeSync(openSync(options.sqlitePath, "a", 0o600));
    chmodSync(options.sqlitePath, 0o600);
    const storage = await openSqliteStorage(options.sqlitePath);
    return { storage, description: `SQLite file ${options.sqlitePath} (writes commit in a writer thread)`, exclusively: (fn) => fn(), close: async () => undefined };
  }
  if (!/^postgres(ql)?:\/\//.test(url)) throw new Error("DATABASE_URL must be a postgres:// or postgresql:// URL");
  const schema = options.schema?.trim() || "public";
  const { Pool } = (await importOptional(() => import("pg"), "pg", "DATABASE_URL (PostgreSQL)")).default;
  // decision D28: a database that goes silent fails connections and statements within seconds.
  const pool = new Pool({ connectionString: url, max: options.poolSize ?? 10, ...SILENT_DATABASE_POOL_OPTIONS });
  // The adapter adds its own listener; this one covers the pool until then and after it closed.
  pool.on("error", () => undefined);
  try {
    const storage = await createPostgresStorage(pool, { schema });
    const { host, pathname } = new URL(url);
    return {
      storage,
      description: `PostgreSQL ${host}${pathname}, schema ${schema}`,
      exclusively: (fn) => withAdvisoryLock(pool, `runplane reference server startup: ${schema}`, fn),
      close: () => pool.end(),
    };
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}

/**
 * A session-level advisory lock held on one connection of its own while `fn` runs over the rest of
 * the pool (so the pool needs at least two connections). A host that dies holding it loses it
 * with its connection.
 */
async function withAdvisoryLock<T>(pool: pg.Pool, name: string, fn: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed = false;
  try {
    await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [name]);
    try {
      return await fn();
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [name]);
    }
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    // After a failure the connection may still hold the lock or be broken: close it, never reuse it.
    client.release(failed);
  }
}

/** What every route answers while the server starts: JSON:API 503, as for a storage that is away (D28). */
export function startingResponse(): Response {
  const errors = [{ status: "503", title: "service unavailable", detail: "the server is starting; try again in a moment" }];
  return new Response(JSON.stringify({ errors }), { status: 503, headers: { "content-type": "application/vnd.api+json", "retry-after": "1" } });
}
