import type Database from "better-sqlite3";
import type pg from "pg";
import { toAuditRow } from "../../adapters/sql/audit-rows.js";
import { EMPTY_HEAD, GENESIS_DIGEST, linkEvent, type AuditHead } from "../../src/storage/audit-chain.js";
import type { AuditEvent } from "../../src/schemas/audit.js";

/**
 * A trail of acme as an earlier schema stored it, for the audit migrations' tests: rows written
 * straight into `audit_events` and `audit_heads`, chained as the adapters chain them.
 */
export interface LegacyTrail {
  rows: unknown[][];
  head: AuditHead;
}

/** The migrations of `list` before the one whose name ends with `suffix`. */
export const migrationsBefore = <M extends { name: string }>(list: readonly M[], suffix: string): M[] => list.slice(0, list.findIndex((m) => m.name.endsWith(suffix)));

/** `events` chained from the genesis digest, as rows of `audit_events` and the head they end at. */
export function legacyTrail(events: readonly AuditEvent[]): LegacyTrail {
  let head = EMPTY_HEAD;
  const rows: unknown[][] = [];
  for (const event of events) {
    const linked = linkEvent(event, head);
    const row = toAuditRow(linked.entry, linked.text);
    rows.push([row.organization, row.seq, row.id, row.at, row.body, row.digest]);
    head = linked.head;
  }
  return { rows, head };
}

const INSERT = (q: string) => `INSERT INTO ${q}audit_events (organization, seq, id, at, body, digest) VALUES ($1, $2, $3, $4, $5, $6)`;
const HEAD = (q: string) => `INSERT INTO ${q}audit_heads (organization, seq, digest, at, pruned_seq, pruned_digest) VALUES ($1, $2, $3, $4, 0, '${GENESIS_DIGEST}')`;

/** `head: false` where the table's own trigger advances the head (from 0022 on). */
export function storeLegacySqlite(db: Database.Database, { rows, head }: LegacyTrail, options: { head: boolean } = { head: true }): void {
  for (const row of rows) db.prepare(INSERT("").replace(/\$\d/g, "?")).run(...row);
  if (options.head) db.prepare(HEAD("").replace(/\$\d/g, "?")).run("acme", head.seq, head.digest, head.at);
}

export async function storeLegacyPostgres(pool: pg.Pool, schema: string, { rows, head }: LegacyTrail): Promise<void> {
  for (const row of rows) await pool.query(INSERT(`"${schema}".`), row);
  await pool.query(HEAD(`"${schema}".`), ["acme", head.seq, head.digest, head.at]);
}
