import type { AuditEvent } from "../../src/schemas/audit.js";
import { digestOfText, GENESIS_DIGEST, linkPieces } from "../../src/storage/audit-chain.js";
import type { SqliteDatabase } from "./driver.js";

/**
 * decision D59: the event linked to the head in the statement that stores it (the caller's
 * transaction holds the write lock): the next seq, the head's digest as prev, a time no earlier than
 * the head's, the text from linkPieces with those filled in, and its digest (`rp_audit_digest`, a
 * call back into JS). The table's trigger advances the head.
 */
export const LINKED_INSERT = `INSERT INTO audit_events (organization, seq, id, at, body, digest)
    SELECT @organization, seq, @id, at, body, rp_audit_digest(body) FROM (
      SELECT seq, at, @p0 || at || @p1 || prev || @p2 || seq || @p3 AS body FROM (
        SELECT coalesce(h.seq, 0) + 1 AS seq, max(CAST(@at AS INTEGER), coalesce(h.at, 0)) AS at, coalesce(h.digest, '${GENESIS_DIGEST}') AS prev
        FROM (SELECT @organization AS organization) AS o LEFT JOIN audit_heads AS h ON h.organization = o.organization))`;

/**
 * decision D59 (second change of 2026-11-29): an event linked in JS to the head this connection expects,
 * stored only when the head is still exactly that one (its seq and digest; the digest covers its
 * time). Nothing of the event is assembled or digested in SQL.
 */
export const GUARDED_INSERT = `INSERT INTO audit_events (organization, seq, id, at, body, digest)
    SELECT @organization, @seq, @id, @at, @body, @digest
    WHERE EXISTS (SELECT 1 FROM audit_heads WHERE organization = @organization AND seq = @prev_seq AND digest = @prev)`;

/** Organizations whose last head a connection keeps: beyond it, the oldest is forgotten (a guess lost, nothing else). */
const MAX_KNOWN = 256;

interface Known {
  seq: number;
  at: number;
  digest: string;
}

/**
 * How an audited write records its event inside its transaction. Most events follow one that this
 * connection just recorded, whose seq, time and digest it remembers: such an event is linked in JS
 * and stored by the guarded insert, which costs SQLite no text assembly and no call back into JS
 * for the digest. When the guess is stale (another connection or process appended since, a
 * transaction rolled back), the guard stores nothing and the event takes the linked insert, which
 * reads the head itself. What is remembered is only a guess: the guard is what keeps the chain
 * linear. Returns `record` and `remember` (for events appended another way).
 */
export function createAuditRecorder(db: SqliteDatabase) {
  const guarded = db.prepare(GUARDED_INSERT);
  const linked = db.prepare(`${LINKED_INSERT} RETURNING seq, at, digest`);
  const known = new Map<string, Known>();
  const remember = (organization: string, head: Known): void => {
    known.delete(organization);
    if (known.size >= MAX_KNOWN) known.delete(known.keys().next().value!);
    known.set(organization, head);
  };
  const record = (event: AuditEvent): void => {
    const { organization, id } = event;
    const [p0, p1, p2, p3] = linkPieces(event);
    const last = known.get(organization);
    if (last) {
      const seq = last.seq + 1;
      const at = Math.max(event.at, last.at);
      const body = `${p0}${at}${p1}${last.digest}${p2}${seq}${p3}`;
      const digest = digestOfText(body);
      if (guarded.run({ organization, seq, id, at, body, digest, prev_seq: last.seq, prev: last.digest }).changes === 1) return remember(organization, { seq, at, digest });
    }
    const row = linked.get({ organization, id, at: event.at, p0, p1, p2, p3 }) as Known;
    remember(organization, { seq: Number(row.seq), at: Number(row.at), digest: row.digest });
  };
  return { record, remember };
}
