import type { HostRecord } from "../../src/schemas/hosts.js";
import { columnList, insertSql, type TableColumns } from "./statements.js";

/** The `hosts` table (decision D29a), shared by the SQLite and PostgreSQL adapters; key id lists as JSON text. */
export interface HostRow {
  id: string;
  name: string;
  pid: number;
  active_key_id: string;
  key_ids: string;
  sealing_key_ids: string;
  interval_ms: number;
  started_at: string;
  last_seen_at: string;
}
export const HOSTS: TableColumns<HostRow> = {
  table: "hosts",
  columns: ["id", "name", "pid", "active_key_id", "key_ids", "sealing_key_ids", "interval_ms", "started_at", "last_seen_at"],
};
export const toHostRow = (r: HostRecord): HostRow => ({
  id: r.id,
  name: r.name,
  pid: r.pid,
  active_key_id: r.activeKeyId,
  key_ids: JSON.stringify(r.keyIds),
  sealing_key_ids: JSON.stringify(r.sealingKeyIds),
  interval_ms: r.intervalMs,
  started_at: r.startedAt,
  last_seen_at: r.lastSeenAt,
});
export const fromHostRow = (row: HostRow): HostRecord => ({
  id: row.id,
  name: row.name,
  pid: Number(row.pid),
  activeKeyId: row.active_key_id,
  keyIds: JSON.parse(row.key_ids) as string[],
  sealingKeyIds: JSON.parse(row.sealing_key_ids) as string[],
  intervalMs: Number(row.interval_ms),
  startedAt: row.started_at,
  lastSeenAt: row.last_seen_at,
});

/**
 * `HostStore.beat` in one statement for both databases: insert, or replace the row whole unless
 * it holds a later beat (the conflict's WHERE), so the changed-row count says which happened.
 */
export const beatSql = (table: string): string => {
  const t = { ...HOSTS, table };
  const set = HOSTS.columns.filter((c) => c !== "id").map((c) => `${c} = excluded.${c}`).join(", ");
  return `${insertSql(t).replace(`INSERT INTO ${table} `, `INSERT INTO ${table} AS h `)} ON CONFLICT (id) DO UPDATE SET ${set} WHERE h.last_seen_at <= excluded.last_seen_at`;
};

export const hostListSql = (table: string): string => `SELECT ${columnList(HOSTS)} FROM ${table} ORDER BY id`;
