import type { AuditEntry, AuditEvent } from "../../src/schemas/audit.js";
import { EMPTY_HEAD, linkEvent } from "../../src/storage/audit-chain.js";
import type { AuditStore } from "../../src/storage/audit-types.js";
import { fromAuditHead, fromAuditRow, prunedEnds, toAuditHead, toAuditRow, type AuditHeadRow, type AuditRow } from "../sql/audit-rows.js";
import { appendAuditWith, deferredTx, groupedTx, type SqliteDatabase } from "./driver.js";
import type { Migration } from "./migration.js";

/** decision D53: the audit trail's tables: events by (organization, seq), one head per organization. */
export const AUDIT_MIGRATION: Migration = {
  name: "0019-audit-trail",
  up: `
    CREATE TABLE audit_events (
      organization TEXT NOT NULL,
      seq INTEGER NOT NULL,
      id TEXT NOT NULL,
      at INTEGER NOT NULL,
      body TEXT NOT NULL,
      digest TEXT NOT NULL,
      PRIMARY KEY (organization, seq)
    ) STRICT, WITHOUT ROWID;
    -- since: the first event after a time, by index; prune: the oldest events of every organization.
    CREATE INDEX audit_events_by_time ON audit_events (organization, at, seq);
    CREATE INDEX audit_events_for_pruning ON audit_events (at, organization, seq);
    CREATE TABLE audit_heads (
      organization TEXT PRIMARY KEY NOT NULL,
      seq INTEGER NOT NULL,
      digest TEXT NOT NULL,
      at INTEGER NOT NULL,
      pruned_seq INTEGER NOT NULL,
      pruned_digest TEXT NOT NULL
    ) STRICT;
  `,
};

/** The statements, exported so the adapter tests can check their query plans. */
export const AUDIT_SQL = {
  head: `SELECT * FROM audit_heads WHERE organization = ?`,
  saveHead: `INSERT INTO audit_heads (organization, seq, digest, at, pruned_seq, pruned_digest)
    VALUES (@organization, @seq, @digest, @at, @pruned_seq, @pruned_digest)
    ON CONFLICT (organization) DO UPDATE SET seq = excluded.seq, digest = excluded.digest, at = excluded.at,
      pruned_seq = excluded.pruned_seq, pruned_digest = excluded.pruned_digest`,
  insert: `INSERT INTO audit_events (organization, seq, id, at, body, digest) VALUES (@organization, @seq, @id, @at, @body, @digest)`,
  firstAfter: `SELECT seq FROM audit_events WHERE organization = ? AND at > ? ORDER BY at, seq LIMIT 1`,
  first: `SELECT seq FROM audit_events WHERE organization = ? ORDER BY seq LIMIT 1`,
  fromSeq: `SELECT body, digest FROM audit_events WHERE organization = ? AND seq >= ? ORDER BY seq LIMIT ?`,
  organizations: `SELECT organization FROM audit_heads ORDER BY organization`,
  oldest: `SELECT organization, seq, digest FROM audit_events WHERE at < ? ORDER BY at, organization, seq LIMIT ?`,
  prunePrefix: `DELETE FROM audit_events WHERE organization = ? AND seq <= ?`,
  markPruned: `UPDATE audit_heads SET pruned_seq = ?, pruned_digest = ? WHERE organization = ? AND pruned_seq < ?`,
} as const;

export function createSqliteAuditStore(db: SqliteDatabase): AuditStore {
  const s = Object.fromEntries(Object.entries(AUDIT_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Record<keyof typeof AUDIT_SQL, ReturnType<SqliteDatabase["prepare"]>>;
  const headOf = (organization: string) => {
    const row = s.head.get(organization) as AuditHeadRow | undefined;
    return row ? toAuditHead(row) : null;
  };
  // Runs inside the caller's transaction (BEGIN IMMEDIATE holds the write lock): the head read and
  // the insert cannot interleave with another writer's.
  const appendRow = (event: AuditEvent): AuditEntry => {
    const { entry, head } = linkEvent(event, headOf(event.organization) ?? EMPTY_HEAD);
    s.insert.run(toAuditRow(entry));
    s.saveHead.run(fromAuditHead(event.organization, head));
    return entry;
  };
  appendAuditWith(db, appendRow);
  const append = groupedTx(db, appendRow, { audited: false });
  const page = deferredTx(db, (organization: string, sinceMs: number | undefined, offset: number, limit: number) => {
    const head = headOf(organization);
    const start = (sinceMs === undefined ? s.first.get(organization) : s.firstAfter.get(organization, sinceMs)) as { seq: number } | undefined;
    if (!head || !start) return { items: [], total: 0 };
    const rows = s.fromSeq.all(organization, start.seq + offset, limit) as AuditRow[];
    return { items: rows.map(fromAuditRow), total: head.seq - start.seq + 1 };
  });
  const prune = groupedTx(db, (beforeMs: number, limit: number) => {
    const rows = s.oldest.all(beforeMs, limit) as { organization: string; seq: number; digest: string }[];
    for (const [organization, end] of prunedEnds(rows)) {
      s.prunePrefix.run(organization, end.seq);
      s.markPruned.run(end.seq, end.digest, organization, end.seq);
    }
    return rows.length;
  }, { audited: false });
  return {
    append: (event) => append(event),
    async list(organization, { sinceMs, offset, limit }) {
      return page(organization, sinceMs, offset, limit);
    },
    async scan(organization, afterSeq, limit) {
      return (s.fromSeq.all(organization, afterSeq + 1, limit) as AuditRow[]).map(fromAuditRow);
    },
    async head(organization) {
      return headOf(organization);
    },
    async organizations() {
      return (s.organizations.all() as { organization: string }[]).map((r) => r.organization);
    },
    prune: (beforeMs, limit) => prune(beforeMs, limit),
  };
}
