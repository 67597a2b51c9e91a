import type { HostStore } from "../../src/storage/hosts-types.js";
import { beatSql, fromHostRow, hostListSql, toHostRow, type HostRow } from "../sql/host-rows.js";
import type { PgPoolLike } from "./driver.js";
import { changed, rowsOf, sql } from "./driver.js";
import type { PgMigration } from "./migration.js";
import { TEXT } from "./sql.js";

/** Decision D29a: the hosts sharing this schema, their keys and last beat (one row per runplane instance). */
export const HOSTS_MIGRATION: PgMigration = {
  name: "0012-hosts",
  up: (q) => `
    CREATE TABLE ${q}hosts (
      id ${TEXT} PRIMARY KEY, name ${TEXT} NOT NULL, pid integer NOT NULL, active_key_id ${TEXT} NOT NULL,
      key_ids ${TEXT} NOT NULL,         -- JSON array
      sealing_key_ids ${TEXT} NOT NULL, -- JSON array
      interval_ms integer NOT NULL, started_at ${TEXT} NOT NULL, last_seen_at ${TEXT} NOT NULL);
  `,
};

export function createHostStore(pool: PgPoolLike, q: string): HostStore {
  const table = `${q}hosts`;
  const s = {
    // INSERT ... ON CONFLICT takes the row lock: racing beats of one host apply one after the other.
    beat: sql(beatSql(table)),
    list: sql(hostListSql(table)),
    remove: sql(`DELETE FROM ${table} WHERE id = @id`),
    prune: sql(`DELETE FROM ${table} WHERE last_seen_at < @before`),
  };
  return {
    beat: async (record) => (await changed(pool, s.beat, toHostRow(record))) === 1,
    list: async () => (await rowsOf<HostRow>(pool, s.list)).map(fromHostRow),
    remove: async (id) => (await changed(pool, s.remove, { id })) === 1,
    prune: async (before) => changed(pool, s.prune, { before }),
  };
}
