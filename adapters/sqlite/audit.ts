import type { AuditEntry, AuditEvent } from "../../src/schemas/audit.js";
import { digestOfText, GENESIS_DIGEST, linkPieces } from "../../src/storage/audit-chain.js";
import type { AuditStore } from "../../src/storage/audit-types.js";
import { fromAuditRow, fromScannedRow, prunedEnds, SCANNED_COLUMNS, toAuditHead, verifiedPrefix, type AuditHeadRow, type AuditRow } from "../sql/audit-rows.js";
import { firstAfterSql, oldestSql } from "../sql/audit-statements.js";
import { createAuditRecorder, LINKED_INSERT } from "./audit-record.js";
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

/**
 * decision D59: recording costs one insert, and as few pages as it can. The head advances in a
 * trigger of that insert (in the engine, no statement of its own). The events move to a rowid
 * table: as a WITHOUT ROWID table every interior page held whole events (five to a page), so an
 * append rewrote 2.6 pages of it on average; now its interior pages hold row ids. The index that
 * served pruning goes (a page per event): pruning seeks each organization's oldest events by
 * `audit_events_by_time`.
 */
export const AUDIT_ONE_INSERT_MIGRATION: Migration = {
  name: "0022-audit-one-insert",
  up: `
    CREATE TABLE audit_events_rowid (
      organization TEXT NOT NULL,
      seq INTEGER NOT NULL,
      id TEXT NOT NULL,
      at INTEGER NOT NULL,
      body TEXT NOT NULL,
      digest TEXT NOT NULL,
      PRIMARY KEY (organization, seq)
    ) STRICT;
    INSERT INTO audit_events_rowid (organization, seq, id, at, body, digest)
      SELECT organization, seq, id, at, body, digest FROM audit_events ORDER BY organization, seq;
    DROP TABLE audit_events;
    ALTER TABLE audit_events_rowid RENAME TO audit_events;
    CREATE INDEX audit_events_by_time ON audit_events (organization, at, seq);
    CREATE TRIGGER audit_events_advance_head AFTER INSERT ON audit_events BEGIN
      INSERT INTO audit_heads (organization, seq, digest, at, pruned_seq, pruned_digest)
        VALUES (NEW.organization, NEW.seq, NEW.digest, NEW.at, 0, '${GENESIS_DIGEST}')
        ON CONFLICT (organization) DO UPDATE SET seq = excluded.seq, digest = excluded.digest, at = excluded.at;
    END;
  `,
};

/**
 * decision D59 (change of 2026-11-29): the index by time goes; every event wrote a page of it. `at`
 * never decreases along a chain and seq is dense, so `since` and pruning find their rows through the
 * primary key (`../sql/audit-statements.ts`).
 */
export const AUDIT_BY_SEQ_MIGRATION: Migration = {
  name: "0023-audit-by-seq",
  up: `DROP INDEX audit_events_by_time;`,
};

/** The statements, exported so the adapter tests can check their query plans. */
export const AUDIT_SQL = {
  head: `SELECT * FROM audit_heads WHERE organization = ?`,
  // The event's own transaction (`append`) returns what it stored; audited writes use audit-record.ts.
  insert: `${LINKED_INSERT} RETURNING body, digest`,
  // decision D59 (change of 2026-11-29): a binary search over seq by the primary key (no index by time).
  firstAfter: firstAfterSql(""),
  first: `SELECT seq FROM audit_events WHERE organization = ? ORDER BY seq LIMIT 1`,
  fromSeq: `SELECT body, digest FROM audit_events WHERE organization = ? AND seq >= ? ORDER BY seq LIMIT ?`,
  scan: `SELECT ${SCANNED_COLUMNS} FROM audit_events WHERE organization = ? AND seq >= ? ORDER BY seq LIMIT ?`,
  organizations: `SELECT organization FROM audit_heads ORDER BY organization`,
  // Pruning: each organization's oldest events, a walk by seq that stops at the first not old enough.
  oldest: oldestSql("", "@organization", (e) => `json_extract(${e}.body, '$.at')`),
  prunePrefix: `DELETE FROM audit_events WHERE organization = ? AND seq <= ?`,
  markPruned: `UPDATE audit_heads SET pruned_seq = ?, pruned_digest = ? WHERE organization = ? AND pruned_seq < ?`,
} as const;

export function createSqliteAuditStore(db: SqliteDatabase): AuditStore {
  // decision D59: the insert digests the text it assembles; the statements below need the function.
  db.function("rp_audit_digest", { deterministic: true }, (text: unknown) => digestOfText(String(text)));
  const s = Object.fromEntries(Object.entries(AUDIT_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Record<keyof typeof AUDIT_SQL, ReturnType<SqliteDatabase["prepare"]>>;
  const headOf = (organization: string) => {
    const row = s.head.get(organization) as AuditHeadRow | undefined;
    return row ? toAuditHead(row) : null;
  };
  // Runs inside the caller's transaction (BEGIN IMMEDIATE holds the write lock): the head the insert
  // links to cannot move under it. An audited write's event goes through the recorder; the event's
  // own transaction (`append`) wants the stored entry back.
  const recorder = createAuditRecorder(db);
  appendAuditWith(db, recorder.record);
  const appendRow = (event: AuditEvent): AuditEntry => {
    const [p0, p1, p2, p3] = linkPieces(event);
    const entry = fromAuditRow(s.insert.get({ organization: event.organization, id: event.id, at: event.at, p0, p1, p2, p3 }) as AuditRow);
    recorder.remember(entry.organization, entry);
    return entry;
  };
  const append = groupedTx(db, appendRow, { audited: false });
  const page = deferredTx(db, (organization: string, sinceMs: number | undefined, offset: number, limit: number) => {
    const head = headOf(organization);
    const start = (sinceMs === undefined ? s.first.get(organization) : s.firstAfter.get({ organization, since: sinceMs })) as { seq: number } | undefined;
    if (!head || !start) return { items: [], total: 0 };
    const rows = s.fromSeq.all(organization, start.seq + offset, limit) as AuditRow[];
    return { items: rows.map(fromAuditRow), total: head.seq - start.seq + 1 };
  });
  const prune = groupedTx(db, (beforeMs: number, limit: number) => {
    const rows: { organization: string; seq: number; digest: string; body: string }[] = [];
    for (const { organization } of s.organizations.all() as { organization: string }[]) {
      if (rows.length >= limit) break;
      rows.push(...verifiedPrefix(s.oldest.all({ organization, before: beforeMs, limit: limit - rows.length }) as typeof rows));
    }
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
      return (s.scan.all(organization, afterSeq + 1, limit) as AuditRow[]).map(fromScannedRow);
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
