import { existsSync } from "node:fs";
import { join } from "node:path";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { pendingMigrations as pendingPostgres } from "../../adapters/postgres/schema.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { pendingMigrations as pendingSqlite } from "../../adapters/sqlite/schema.js";
import type { Storage } from "../../src/index.js";
import { importOptional } from "../../src/optional-peer.js";
import type { ServerConfig } from "./config.js";

/** PostgreSQL did not answer: every check that reads the database would fail the same way. */
export class DatabaseUnreachableError extends Error {
  override name = "DatabaseUnreachableError";
}

/** The server's database as the checks see it: where it is, what it lacks, and (when current) its storage. */
export interface InspectedDatabase {
  where: string;
  pending: string[];
  /**
   * A storage over it, for reads only; null while migrations are pending (the adapter would apply
   * them) or where opening the adapter would change the file (a SQLite file no server has opened yet).
   */
  storage(): Promise<Storage | null>;
}

/**
 * Opens the database `serve` would use without changing it (SQLite read only; PostgreSQL only read
 * while its schema is current) and runs `fn` on it; resolves null, without calling `fn`, when the
 * SQLite file does not exist yet. Errors say which setting to fix.
 */
export async function inspectDatabase<T>(config: ServerConfig, fn: (db: InspectedDatabase) => Promise<T>): Promise<T | null> {
  if (config.databaseUrl) return inspectPostgres(config.databaseUrl, config.databaseSchema, fn);
  const path = join(config.dataDir, "runplane.db");
  if (!existsSync(path)) return null;
  const { default: Database } = await importOptional(() => import("better-sqlite3"), "better-sqlite3", "the SQLite file");
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const pending = pendingSqlite(db);
    // The adapter switches a file to WAL, a write; a file the server opened already is in WAL, and
    // with nothing pending the adapter's migrate step only reads the version.
    const current = pending.length === 0 && db.pragma("journal_mode", { simple: true }) === "wal";
    return await fn({ where: `SQLite file ${path}`, pending, storage: async () => (current ? createSqliteStorage(db) : null) });
  } finally {
    if (db.open) db.close();
  }
}

async function inspectPostgres<T>(url: string, schema: string, fn: (db: InspectedDatabase) => Promise<T>): Promise<T> {
  const pg = (await importOptional(() => import("pg"), "pg", "DATABASE_URL (PostgreSQL)")).default;
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5_000 });
  pool.on("error", () => undefined);
  let pending: string[];
  try {
    pending = await pendingPostgres(pool, schema);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new DatabaseUnreachableError(`PostgreSQL: ${error instanceof Error ? error.message : String(error)}: check DATABASE_URL and that the server runs`);
  }
  const { host, pathname } = new URL(url);
  try {
    const storage = async () => (pending.length === 0 ? createPostgresStorage(pool, { schema }) : null);
    return await fn({ where: `PostgreSQL ${host}${pathname}, schema ${schema}`, pending, storage });
  } finally {
    await pool.end().catch(() => undefined);
  }
}
