import type { HostStore } from "../../src/storage/hosts-types.js";
import { beatSql, fromHostRow, hostListSql, toHostRow, type HostRow } from "../sql/host-rows.js";
import type { SqliteDatabase } from "./driver.js";
import { deferredTx, immediateTx } from "./driver.js";
import type { Migration } from "./migration.js";

/** Decision D29a: the hosts using this file, their keys and last beat (one row per runplane instance). */
export const HOSTS_MIGRATION: Migration = {
  name: "0015-hosts",
  up: `
    CREATE TABLE hosts (
      id TEXT PRIMARY KEY NOT NULL,
      name TEXT NOT NULL,
      pid INTEGER NOT NULL,
      active_key_id TEXT NOT NULL,
      key_ids TEXT NOT NULL,         -- JSON array
      sealing_key_ids TEXT NOT NULL, -- JSON array
      interval_ms INTEGER NOT NULL,
      started_at TEXT NOT NULL,
      last_seen_at TEXT NOT NULL
    ) STRICT;
  `,
};

export function createHostStore(db: SqliteDatabase): HostStore {
  const upsert = db.prepare(beatSql("hosts"));
  const all = db.prepare(hostListSql("hosts"));
  const removeRow = db.prepare(`DELETE FROM hosts WHERE id = ?`);
  const pruneRows = db.prepare(`DELETE FROM hosts WHERE last_seen_at < ?`);
  const beat = immediateTx(db, (row: HostRow) => upsert.run(row).changes === 1);
  const remove = immediateTx(db, (id: string) => removeRow.run(id).changes === 1);
  const prune = immediateTx(db, (before: string) => pruneRows.run(before).changes);
  const list = deferredTx(db, () => (all.all() as HostRow[]).map(fromHostRow));
  return {
    beat: async (record) => beat(toHostRow(record)),
    list: async () => list(),
    remove: async (id) => remove(id),
    prune: async (before) => prune(before),
  };
}
