import type { AuditEntry, ScannedAuditEntry } from "../../src/schemas/audit.js";
import { digestOfText, type AuditHead } from "../../src/storage/audit-chain.js";

/**
 * decision D53: how both SQL adapters store the audit trail. An event row keeps its JSON body (the
 * event with `seq` and `prev`) and its digest; `organization`, `seq` and `at` are columns for the
 * indexes. `body` is what the digest covers, so `verify` reads it back exactly as stored.
 */
export interface AuditRow {
  organization: string;
  seq: number | string;
  id: string;
  at: number | string;
  body: string;
  digest: string;
}

export interface AuditHeadRow {
  organization: string;
  seq: number | string;
  digest: string;
  at: number | string;
  pruned_seq: number | string;
  pruned_digest: string;
}

/** The row of `entry`; `text`, when given, is its body's JSON already made (`linkEvent`'s). */
export function toAuditRow(entry: AuditEntry, text?: string): AuditRow {
  const { digest, ...body } = entry;
  return { organization: entry.organization, seq: entry.seq, id: entry.id, at: entry.at, body: text ?? JSON.stringify(body), digest };
}

/** The entry as stored: its body, whatever the columns say (an edited body fails its digest). */
export function fromAuditRow(row: Pick<AuditRow, "body" | "digest">): AuditEntry {
  return { ...(JSON.parse(row.body) as Omit<AuditEntry, "digest">), digest: row.digest };
}

/** A row as `scan` reads it for verify: its entry and the columns beside the body (decision D53). */
export function fromScannedRow(row: AuditRow): ScannedAuditEntry {
  const stored = { seq: Number(row.seq), id: row.id, at: Number(row.at) };
  let body: unknown;
  try {
    body = JSON.parse(row.body);
  } catch {
    body = null;
  }
  // A body that is no event's JSON (found from outside: verify stopped on a bare parse error) is
  // read as an edited row at its column's seq: the walker reports it, nothing else reads it.
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { seq: stored.seq, digest: row.digest, stored, unreadable: true } as unknown as ScannedAuditEntry;
  return { ...(body as Omit<AuditEntry, "digest">), digest: row.digest, stored };
}

/** The columns `scan` reads (`fromScannedRow`). */
export const SCANNED_COLUMNS = "seq, id, at, body, digest";

// PostgreSQL answers bigint as a string.
export const toAuditHead = (row: AuditHeadRow): AuditHead => ({
  seq: Number(row.seq),
  digest: row.digest,
  at: Number(row.at),
  prunedSeq: Number(row.pruned_seq),
  prunedDigest: row.pruned_digest,
});

export const fromAuditHead = (organization: string, head: AuditHead): AuditHeadRow => ({
  organization,
  seq: head.seq,
  digest: head.digest,
  at: head.at,
  pruned_seq: head.prunedSeq,
  pruned_digest: head.prunedDigest,
});

/**
 * The rows to prune, each organization's up to (not including) the first whose body does not match
 * its digest: an edited row is never removed (verify names it), nor anything after it. Rows come
 * oldest first per organization, seq after seq (`oldestSql`'s walk).
 */
export function verifiedPrefix<R extends { organization: string; digest: string; body: string }>(rows: readonly R[]): R[] {
  const stopped = new Set<string>();
  return rows.filter((row) => {
    if (!stopped.has(row.organization) && digestOfText(row.body) === row.digest) return true;
    stopped.add(row.organization);
    return false;
  });
}

/** The last pruned row of each organization among rows picked oldest first: where each chain now starts. */
export function prunedEnds(rows: readonly { organization: string; seq: number | string; digest: string }[]): Map<string, { seq: number; digest: string }> {
  const ends = new Map<string, { seq: number; digest: string }>();
  for (const row of rows) {
    const seq = Number(row.seq);
    if ((ends.get(row.organization)?.seq ?? 0) < seq) ends.set(row.organization, { seq, digest: row.digest });
  }
  return ends;
}
