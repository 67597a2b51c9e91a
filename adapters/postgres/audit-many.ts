import type { AuditEvent } from "../../src/schemas/audit.js";
import { GENESIS_DIGEST, linkPieces } from "../../src/storage/audit-chain.js";
import { run, sql, type Queryable, type Statement } from "./driver.js";
import type { PgMigration } from "./migration.js";

/**
 * decision D64: `rp_audit_append(organization, events)` appends an organization's events, in
 * order, in the statement that calls it: it takes the head row (FOR UPDATE, which waits for
 * another host's append to commit and then reads what it wrote; for a first event an upsert that
 * creates the row at seq 0 or takes the one another host just created), links each event from the one before exactly as D59's one insert links one (the text
 * from `linkPieces`' pieces around the linked `at`, `prev` and `seq`, and its SHA-256), and
 * advances the head to the last. Called inside the group's transaction, never by an autocommit
 * statement of a write: a cut connection lets such a statement commit while runplane answers 503.
 */
export const AUDIT_APPEND_FUNCTION_MIGRATION: PgMigration = {
  name: "0021-audit-append-function",
  up: (q) => `
    CREATE FUNCTION ${q}rp_audit_append(p_organization text, p_events json) RETURNS integer LANGUAGE plpgsql AS $fn$
    DECLARE
      v_seq bigint; v_digest text; v_at bigint; v_prev text; v_body text; v_event json; v_count integer := 0;
    BEGIN
      SELECT seq, digest, at INTO v_seq, v_digest, v_at FROM ${q}audit_heads WHERE organization = p_organization FOR UPDATE;
      IF NOT FOUND THEN
        -- A first event: the row at seq 0, or the one another host created meanwhile (then locked).
        INSERT INTO ${q}audit_heads AS h (organization, seq, digest, at, pruned_seq, pruned_digest, prev)
          VALUES (p_organization, 0, '${GENESIS_DIGEST}', 0, 0, '${GENESIS_DIGEST}', '${GENESIS_DIGEST}')
          ON CONFLICT (organization) DO UPDATE SET organization = h.organization
          RETURNING h.seq, h.digest, h.at INTO v_seq, v_digest, v_at;
      END IF;
      FOR v_event IN SELECT e.value FROM json_array_elements(p_events) WITH ORDINALITY AS e(value, n) ORDER BY e.n LOOP
        v_seq := v_seq + 1;
        v_at := greatest(v_at, (v_event->>'at')::bigint);
        v_body := (v_event->>'p0') || v_at::text || (v_event->>'p1') || v_digest || (v_event->>'p2') || v_seq::text || (v_event->>'p3');
        v_prev := v_digest;
        v_digest := encode(sha256(convert_to(v_body, 'UTF8')), 'hex');
        INSERT INTO ${q}audit_events (organization, seq, id, at, body, digest) VALUES (p_organization, v_seq, v_event->>'id', v_at, v_body, v_digest);
        v_count := v_count + 1;
      END LOOP;
      IF v_count > 0 THEN
        UPDATE ${q}audit_heads SET seq = v_seq, digest = v_digest, at = v_at, prev = v_prev WHERE organization = p_organization;
      END IF;
      RETURN v_count;
    END $fn$;
  `,
};

/** An event as `rp_audit_append` takes it: its id, its time and the pieces of its linked text. */
function appendInput(event: AuditEvent): { id: string; at: number; p0: string; p1: string; p2: string; p3: string } {
  const [p0, p1, p2, p3] = linkPieces(event);
  return { id: event.id, at: event.at, p0, p1, p2, p3 };
}

const cache = new Map<string, Statement>();

/** Appends `events` (one organization's, in order) inside the caller's transaction on `client`. */
export async function appendAuditEvents(client: Queryable, q: string, organization: string, events: readonly AuditEvent[]): Promise<void> {
  let statement = cache.get(q);
  if (!statement) cache.set(q, (statement = sql(`SELECT ${q}rp_audit_append(@organization, @events::json)`)));
  await run(client, statement, { organization, events: JSON.stringify(events.map(appendInput)) });
}
