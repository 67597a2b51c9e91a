import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { countingPool } from "../../adapters/postgres/statement-count.js";
import { countSince, newSharedStatementBuffer, sharedStatementCount, type StatementCount } from "../../adapters/sql/statement-count.js";
import { createWriterThreadStorage, writerThreadOf } from "../../adapters/sqlite/writer-client.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { countingSqlite } from "../../adapters/sqlite/statement-count.js";
import type { Storage } from "../../src/storage/types.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../helpers/postgres.js";

/** A storage whose driver counts the statements it runs (decision D56). */
export interface CountedStorage {
  storage: Storage;
  count: StatementCount;
  dispose(): Promise<void>;
}

/** An in-memory SQLite database, writes on this thread: the writer thread runs the same statements. */
export function countedSqlite(): CountedStorage {
  const raw = new Database(":memory:");
  const { db, count } = countingSqlite(raw);
  const storage = createSqliteStorage(db);
  return { storage, count, dispose: () => storage.close() };
}

/**
 * A SQLite file written by the writer thread (decision D37), as `openSqliteStorage` makes it: the
 * main thread's connection reads, the thread's commits; the count is both threads' together.
 */
export async function countedSqliteThread(): Promise<CountedStorage> {
  const dir = mkdtempSync(join(tmpdir(), "runplane-budget-"));
  const path = join(dir, "runplane.db");
  const raw = new Database(path);
  const main = countingSqlite(raw);
  const local = createSqliteStorage(main.db, { synchronous: "NORMAL" }); // migrates, as the thread mode does
  raw.pragma("query_only = ON");
  const buffer = newSharedStatementBuffer();
  const storage = createWriterThreadStorage(local, { path, synchronous: "NORMAL", busyTimeoutMs: 5000, statementCount: buffer }, { writeTimeoutMs: 10_000 });
  await writerThreadOf(storage)!.ready;
  const thread = sharedStatementCount(buffer);
  const both = (key: "statements" | "transactions" | "control") => ({ get: () => main.count[key] + thread[key], enumerable: true });
  const count = Object.defineProperties({} as StatementCount, {
    statements: both("statements"),
    transactions: both("transactions"),
    control: both("control"),
    // Statement texts are kept for the main thread's reads only.
    texts: { get: () => main.count.texts, set: (texts?: Map<string, number>) => void (main.count.texts = texts), enumerable: false },
  });
  return {
    storage,
    count,
    async dispose() {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh schema of the test database. */
export async function countedPostgres(label: string): Promise<CountedStorage> {
  const raw = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  raw.on("error", () => undefined);
  const schema = uniqueSchema(label);
  const { pool, count } = countingPool(raw);
  const storage = await createPostgresStorage(pool, { schema });
  return {
    storage,
    count,
    async dispose() {
      await storage.close();
      await dropSchema(raw, schema);
      await raw.end();
    },
  };
}

/** What `work` costs in statements. */
export async function measured<T>(count: StatementCount, work: () => Promise<T>): Promise<{ value: T; cost: StatementCount }> {
  const before = { ...count };
  const value = await work();
  return { value, cost: countSince(count, before) };
}
