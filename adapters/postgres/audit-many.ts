import type { AuditEvent } from "../../src/schemas/audit.js";
import { GENESIS_DIGEST, linkPieces } from "../../src/storage/audit-chain.js";
import { digest, linked } from "./audit.js";
import { run, sql, type Queryable, type Statement } from "./driver.js";
import { TEXT } from "./sql.js";

/**
 * decision D64: the events of one organization a group of audited writes recorded, appended in one
 * statement. The head row is taken first (FOR UPDATE: waiting for another host's append to commit
 * reads what it wrote), the events are linked in order from it by a recursive step per event (each
 * digest covers the previous one, as one insert per event would link them), and the head advances
 * to the last. An organization without a head yet starts from the genesis digest; two hosts
 * starting one at once collide on the first seq, and the loser's group runs its writes alone.
 */
function appendMany(q: string): Statement {
  const piece = (n: number) => `i.p${n}`;
  return sql(`WITH RECURSIVE input AS (
      SELECT * FROM json_to_recordset(@events::json) AS x(n int, id ${TEXT}, at bigint, p0 text, p1 text, p2 text, p3 text)
    ), locked AS (
      SELECT seq, digest, at FROM ${q}audit_heads WHERE organization = @organization FOR UPDATE
    ), head AS (
      SELECT seq, digest, at FROM locked UNION ALL SELECT 0, '${GENESIS_DIGEST}', 0 WHERE NOT EXISTS (SELECT 1 FROM locked)
    ), chain AS (
      SELECT i.n, i.id, h.seq + 1 AS seq, greatest(h.at, i.at) AS at, h.digest AS prev,
        ${linked("greatest(h.at, i.at)", "h.digest", "(h.seq + 1)", piece)} AS body
        FROM input i, head h WHERE i.n = 1
      UNION ALL
      SELECT i.n, i.id, c.seq + 1, greatest(c.at, i.at), ${digest("c.body")},
        ${linked("greatest(c.at, i.at)", digest("c.body"), "(c.seq + 1)", piece)}
        FROM chain c JOIN input i ON i.n = c.n + 1
    ), stored AS (
      INSERT INTO ${q}audit_events (organization, seq, id, at, body, digest)
        SELECT @organization, seq, id, at, body, ${digest("body")} FROM chain
    )
    INSERT INTO ${q}audit_heads AS h (organization, seq, digest, at, pruned_seq, pruned_digest, prev)
      SELECT @organization, seq, ${digest("body")}, at, 0, '${GENESIS_DIGEST}', prev FROM chain
        WHERE n = (SELECT max(n) FROM input)
      ON CONFLICT (organization) DO UPDATE SET seq = excluded.seq, digest = excluded.digest, at = excluded.at, prev = excluded.prev`);
}

const cache = new Map<string, Statement>();

/** Appends `events` (one organization's, in order) inside the caller's transaction on `client`. */
export async function appendAuditEvents(client: Queryable, q: string, organization: string, events: readonly AuditEvent[]): Promise<void> {
  let statement = cache.get(q);
  if (!statement) cache.set(q, (statement = appendMany(q)));
  const rows = events.map((event, i) => {
    const [p0, p1, p2, p3] = linkPieces(event);
    return { n: i + 1, id: event.id, at: event.at, p0, p1, p2, p3 };
  });
  await run(client, statement, { organization, events: JSON.stringify(rows) });
}
