import Database from "better-sqlite3";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";

/**
 * A fresh SQLite file per test in its own temp directory; every connection opened through
 * `connect()` is closed and the directory removed after the test.
 */
export function useTempSqliteFile(prefix: string) {
  let dir = "";
  let path = "";
  const open: Database.Database[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
    path = join(dir, "runplane.db");
  });
  afterEach(async () => {
    for (const db of open.splice(0)) if (db.open) db.close();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    get dir(): string {
      return dir;
    },
    get path(): string {
      return path;
    },
    connect(): Database.Database {
      const db = new Database(path);
      open.push(db);
      return db;
    },
  };
}

/** SQLite's query plan of `sql` as one line, for asserting index use. */
export const queryPlan = (db: Database.Database, sql: string, ...params: unknown[]): string =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join(" | ");
