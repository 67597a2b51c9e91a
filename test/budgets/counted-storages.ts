import Database from "better-sqlite3";
import pg from "pg";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { countingPool } from "../../adapters/postgres/statement-count.js";
import { countSince, type StatementCount } from "../../adapters/sql/statement-count.js";
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
