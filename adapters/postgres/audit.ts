import type { AuditEvent } from "../../src/schemas/audit.js";
import { GENESIS_DIGEST, linkPieces } from "../../src/storage/audit-chain.js";
import type { AuditStore } from "../../src/storage/audit-types.js";
import { fromAuditRow, fromScannedRow, prunedEnds, SCANNED_COLUMNS, toAuditHead, verifiedPrefix, type AuditHeadRow, type AuditRow } from "../sql/audit-rows.js";
import { firstAfterSql, oldestSql } from "../sql/audit-statements.js";
import { retrying, rowsOf, run, sql, transaction, type PgPoolLike, type Queryable } from "./driver.js";
import type { PgMigration } from "./migration.js";
import { TEXT } from "./sql.js";

/** decision D53: the audit trail's tables: events by (organization, seq), one head row per organization. */
export const AUDIT_MIGRATION: PgMigration = {
  name: "0016-audit-trail",
  up: (q) => `
    CREATE TABLE ${q}audit_events (
      organization ${TEXT} NOT NULL,
      seq bigint NOT NULL,
      id ${TEXT} NOT NULL,
      at bigint NOT NULL,
      body text NOT NULL,
      digest ${TEXT} NOT NULL,
      PRIMARY KEY (organization, seq)
    );
    CREATE INDEX audit_events_by_time ON ${q}audit_events (organization, at, seq);
    CREATE INDEX audit_events_for_pruning ON ${q}audit_events (at, organization, seq);
    CREATE TABLE ${q}audit_heads (
      organization ${TEXT} PRIMARY KEY,
      seq bigint NOT NULL,
      digest ${TEXT} NOT NULL,
      at bigint NOT NULL,
      pruned_seq bigint NOT NULL,
      pruned_digest ${TEXT} NOT NULL
    );
  `,
};

/**
 * decision D59: recording costs one insert. The head row keeps its previous digest (`prev`), so the
 * statement that advances it can answer the link the event needs; the index that served pruning
 * goes (every event wrote a page of it): pruning seeks each organization's oldest events by
 * `audit_events_by_time`.
 */
export const AUDIT_ONE_INSERT_MIGRATION: PgMigration = {
  name: "0019-audit-one-insert",
  up: (q) => `
    ALTER TABLE ${q}audit_heads ADD COLUMN prev ${TEXT} NOT NULL DEFAULT '${GENESIS_DIGEST}';
    DROP INDEX ${q}audit_events_for_pruning;
  `,
};

/**
 * decision D59 (change of 2026-11-29): the index by time goes; every event wrote a page of it. `at`
 * never decreases along a chain and seq is dense, so `since` and pruning find their rows through the
 * primary key (`../sql/audit-statements.ts`).
 */
export const AUDIT_BY_SEQ_MIGRATION: PgMigration = {
  name: "0020-audit-by-seq",
  up: (q) => `DROP INDEX ${q}audit_events_by_time;`,
};

/** The canonical text of the linked event, from linkPieces' pieces and the head's values (D59). */
const linked = (at: string, prev: string, seq: string) => `@p0::text || ${at} || @p1::text || ${prev} || @p2::text || ${seq} || @p3::text`;
const digest = (text: string) => `encode(sha256(convert_to(${text}, 'UTF8')), 'hex')`;

function auditStatements(q: string) {
  return {
    // decision D59: one statement, one round trip. The head row is the organization's lock: the
    // upsert creates it with the first event or takes it (waiting for another host's append to
    // commit, then reading what it wrote), advances it and digests the linked text; the event is
    // inserted from what it answers. Appends of one organization, from any host, extend one chain.
    insert: sql(`WITH head AS (
        INSERT INTO ${q}audit_heads AS h (organization, seq, digest, at, pruned_seq, pruned_digest, prev)
        VALUES (@organization, 1, ${digest(linked("@at::bigint", `'${GENESIS_DIGEST}'`, "1"))}, @at::bigint, 0, '${GENESIS_DIGEST}', '${GENESIS_DIGEST}')
        ON CONFLICT (organization) DO UPDATE SET seq = h.seq + 1, at = greatest(h.at, excluded.at), prev = h.digest,
          digest = ${digest(linked("greatest(h.at, excluded.at)", "h.digest", "(h.seq + 1)"))}
        RETURNING seq, at, prev, digest)
      INSERT INTO ${q}audit_events (organization, seq, id, at, body, digest)
        SELECT @organization, seq, @id, at, ${linked("at", "prev", "seq")}, digest FROM head
      RETURNING body, digest`),
    head: sql(`SELECT * FROM ${q}audit_heads WHERE organization = @organization AND seq > 0`),
    // A binary search over seq by the primary key (no index by time).
    firstAfter: sql(firstAfterSql(q)),
    first: sql(`SELECT seq FROM ${q}audit_events WHERE organization = @organization ORDER BY seq LIMIT 1`),
    fromSeq: sql(`SELECT body, digest FROM ${q}audit_events WHERE organization = @organization AND seq >= @seq ORDER BY seq LIMIT @limit`),
    scan: sql(`SELECT ${SCANNED_COLUMNS} FROM ${q}audit_events WHERE organization = @organization AND seq >= @seq ORDER BY seq LIMIT @limit`),
    organizations: sql(`SELECT organization FROM ${q}audit_heads WHERE seq > 0 ORDER BY organization`),
    // Each organization's oldest events, organization after organization, until the batch is full:
    // per organization a walk by seq that stops at the first event not old enough (one row read
    // when nothing is), in one statement.
    oldest: sql(`SELECT w.organization, w.seq, w.digest, w.body FROM (SELECT organization FROM ${q}audit_heads ORDER BY organization) AS h
      CROSS JOIN LATERAL (${oldestSql(q, "h.organization", (e) => `(${e}.body::json->>'at')::bigint`)}) AS w
      LIMIT @limit`),
    prunePrefix: sql(`DELETE FROM ${q}audit_events WHERE organization = @organization AND seq <= @seq`),
    markPruned: sql(`UPDATE ${q}audit_heads SET pruned_seq = @seq, pruned_digest = @digest WHERE organization = @organization AND pruned_seq < @seq`),
  };
}

const cache = new Map<string, ReturnType<typeof auditStatements>>();
const statementsFor = (q: string) => {
  let s = cache.get(q);
  if (!s) cache.set(q, (s = auditStatements(q)));
  return s;
};

/** Appends `event` inside the caller's transaction on `client`, holding the organization's head row; resolves the stored row. */
export async function appendAuditEvent(client: Queryable, q: string, event: AuditEvent): Promise<AuditRow> {
  const [p0, p1, p2, p3] = linkPieces(event);
  const [row] = await rowsOf<AuditRow>(client, statementsFor(q).insert, { organization: event.organization, id: event.id, at: event.at, p0, p1, p2, p3 });
  return row!;
}

export function createPostgresAuditStore(pool: PgPoolLike, q: string): AuditStore {
  const s = statementsFor(q);
  const entries = (rows: AuditRow[]) => rows.map(fromAuditRow);
  return {
    // One statement: autocommitted, it is its own transaction.
    append: async (event) => fromAuditRow(await retrying(() => appendAuditEvent(pool, q, event))),
    async list(organization, { sinceMs, offset, limit }) {
      // Pages are seq ranges (seq is dense from the pruned prefix on): page 1 and the last cost alike.
      const [head] = await rowsOf<AuditHeadRow>(pool, s.head, { organization });
      const [start] = await rowsOf<{ seq: string }>(pool, sinceMs === undefined ? s.first : s.firstAfter, { organization, since: sinceMs });
      if (!head || !start) return { items: [], total: 0 };
      const from = Number(start.seq);
      const rows = await rowsOf<AuditRow>(pool, s.fromSeq, { organization, seq: from + offset, limit });
      return { items: entries(rows), total: Math.max(0, Number(head.seq) - from + 1) };
    },
    async scan(organization, afterSeq, limit) {
      return (await rowsOf<AuditRow>(pool, s.scan, { organization, seq: afterSeq + 1, limit })).map(fromScannedRow);
    },
    async head(organization) {
      const [row] = await rowsOf<AuditHeadRow>(pool, s.head, { organization });
      return row ? toAuditHead(row) : null;
    },
    async organizations() {
      return (await rowsOf<{ organization: string }>(pool, s.organizations)).map((r) => r.organization);
    },
    prune: (beforeMs, limit) =>
      retrying(() =>
        transaction(pool, async (client) => {
          const rows = verifiedPrefix(await rowsOf<{ organization: string; seq: string; digest: string; body: string }>(client, s.oldest, { before: beforeMs, limit }));
          for (const [organization, end] of prunedEnds(rows)) {
            await run(client, s.prunePrefix, { organization, seq: end.seq });
            await run(client, s.markPruned, { organization, seq: end.seq, digest: end.digest });
          }
          return rows.length;
        }),
      ),
  };
}
