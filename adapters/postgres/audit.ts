import type { AuditEntry, AuditEvent } from "../../src/schemas/audit.js";
import { GENESIS_DIGEST, linkEvent } from "../../src/storage/audit-chain.js";
import type { AuditStore } from "../../src/storage/audit-types.js";
import { fromAuditRow, prunedEnds, toAuditHead, toAuditRow, type AuditHeadRow, type AuditRow } from "../sql/audit-rows.js";
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

function auditStatements(q: string) {
  return {
    // The head row is the organization's lock: every append takes it FOR UPDATE in its transaction,
    // so appends of one organization, from any host, extend the chain one at a time.
    ensureHead: sql(`INSERT INTO ${q}audit_heads (organization, seq, digest, at, pruned_seq, pruned_digest)
      VALUES (@organization, 0, '${GENESIS_DIGEST}', 0, 0, '${GENESIS_DIGEST}') ON CONFLICT (organization) DO NOTHING`),
    lockHead: sql(`SELECT * FROM ${q}audit_heads WHERE organization = @organization FOR UPDATE`),
    head: sql(`SELECT * FROM ${q}audit_heads WHERE organization = @organization AND seq > 0`),
    advance: sql(`UPDATE ${q}audit_heads SET seq = @seq, digest = @digest, at = @at WHERE organization = @organization`),
    insert: sql(`INSERT INTO ${q}audit_events (organization, seq, id, at, body, digest) VALUES (@organization, @seq, @id, @at, @body, @digest)`),
    firstAfter: sql(`SELECT seq FROM ${q}audit_events WHERE organization = @organization AND at > @since ORDER BY at, seq LIMIT 1`),
    first: sql(`SELECT seq FROM ${q}audit_events WHERE organization = @organization ORDER BY seq LIMIT 1`),
    fromSeq: sql(`SELECT body, digest FROM ${q}audit_events WHERE organization = @organization AND seq >= @seq ORDER BY seq LIMIT @limit`),
    organizations: sql(`SELECT organization FROM ${q}audit_heads WHERE seq > 0 ORDER BY organization`),
    oldest: sql(`SELECT organization, seq, digest FROM ${q}audit_events WHERE at < @before ORDER BY at, organization, seq LIMIT @limit`),
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

/** Appends `event` inside the caller's transaction on `client`, holding the organization's head row. */
export async function appendAuditEvent(client: Queryable, q: string, event: AuditEvent): Promise<AuditEntry> {
  const s = statementsFor(q);
  const organization = event.organization;
  await run(client, s.ensureHead, { organization });
  const [row] = await rowsOf<AuditHeadRow>(client, s.lockHead, { organization });
  const { entry, head } = linkEvent(event, toAuditHead(row!));
  await run(client, s.insert, toAuditRow(entry));
  await run(client, s.advance, { organization, seq: head.seq, digest: head.digest, at: head.at });
  return entry;
}

export function createPostgresAuditStore(pool: PgPoolLike, q: string): AuditStore {
  const s = statementsFor(q);
  const entries = (rows: AuditRow[]) => rows.map(fromAuditRow);
  return {
    append: (event) => retrying(() => transaction(pool, (client) => appendAuditEvent(client, q, event))),
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
      return entries(await rowsOf<AuditRow>(pool, s.fromSeq, { organization, seq: afterSeq + 1, limit }));
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
          const rows = await rowsOf<{ organization: string; seq: string; digest: string }>(client, s.oldest, { before: beforeMs, limit });
          for (const [organization, end] of prunedEnds(rows)) {
            await run(client, s.prunePrefix, { organization, seq: end.seq });
            await run(client, s.markPruned, { organization, seq: end.seq, digest: end.digest });
          }
          return rows.length;
        }),
      ),
  };
}
