import Database from "better-sqlite3";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import type { StorageSetup } from "./storages.js";

/**
 * An in-memory SQLite storage whose every row can be read back at once, so a test can assert that a
 * refused request left nothing stored (D30). API tokens' `last_used_at` is left out: an
 * authenticated request records it (D22) whatever its answer. So is the `hosts` table: the host's
 * heartbeat (D29a) writes it every 15 s whatever the requests, and a long run under load crosses one.
 */
export function snapshotSqlite(): { setup: StorageSetup; snapshot(): string } {
  const db = new Database(":memory:");
  const setup: StorageSetup = { name: "sqlite", create: () => ({ storage: createSqliteStorage(db), dispose: () => db.close() }) };
  const snapshot = (): string => {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'hosts' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
    const rows = tables.map((t) =>
      (db.prepare(`SELECT * FROM "${t}" ORDER BY 1, 2`).all() as Record<string, unknown>[]).map(({ last_used_at: _, ...row }) => row),
    );
    return JSON.stringify(rows);
  };
  return { setup, snapshot };
}
