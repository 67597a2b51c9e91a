import { createHash } from "node:crypto";
import type { AuditEntry, AuditEvent } from "../schemas/audit.js";

/**
 * decision D53: each organization's events form a hash chain. An event's digest covers its canonical
 * JSON with its `seq` and the previous event's digest, so editing a row changes its digest, and
 * deleting one breaks the next row's `prev`. Adapters call `linkEvent` inside the transaction that
 * stores the change, holding their organization's head, so the chain stays linear across hosts.
 */
export const GENESIS_DIGEST = "0".repeat(64);

/** Where an organization's chain stands: the newest event, and what the pruned prefix ended with. */
export interface AuditHead {
  seq: number;
  digest: string;
  at: number;
  /** The last pruned event's seq and digest (0 and the genesis digest when nothing was pruned). */
  prunedSeq: number;
  prunedDigest: string;
}

export const EMPTY_HEAD: AuditHead = { seq: 0, digest: GENESIS_DIGEST, at: 0, prunedSeq: 0, prunedDigest: GENESIS_DIGEST };

/** JSON with object keys sorted, so the same event always has the same bytes. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The digest of an entry's body: everything but the digest itself. */
export function digestOf(entry: Omit<AuditEntry, "digest">): string {
  return createHash("sha256").update(canonicalJson(entry)).digest("hex");
}

/**
 * The entry `event` becomes after `head`: the next seq, `head`'s digest as `prev`, and a time no
 * earlier than the head's (a host whose clock lags must not put an event before its predecessor,
 * or `since` would skip it). Returns the entry and the new head.
 */
export function linkEvent(event: AuditEvent, head: AuditHead): { entry: AuditEntry; head: AuditHead } {
  const body = { ...event, at: Math.max(event.at, head.at), seq: head.seq + 1, prev: head.digest };
  const entry: AuditEntry = { ...body, digest: digestOf(body) };
  return { entry, head: { ...head, seq: entry.seq, digest: entry.digest, at: entry.at } };
}

/** The first place a chain stops holding, or null when every row links. */
export interface ChainBreak {
  seq: number;
  reason: "edited" | "missing" | "relinked" | "head-mismatch";
}

/**
 * Walks rows of one organization in `seq` order from where the pruned prefix ended, and names the
 * first break: a row whose digest does not match its body (`edited`), a gap in `seq` (`missing`), a
 * row whose `prev` is not its predecessor's digest (`relinked`), or a chain that ends before or
 * after the head the storage recorded (`head-mismatch`, the newest rows deleted).
 */
export function createChainWalker(head: AuditHead) {
  let expectSeq = head.prunedSeq + 1;
  let expectPrev = head.prunedDigest;
  return {
    /** Checks the next row; a break, or null. */
    next(entry: AuditEntry): ChainBreak | null {
      const { digest, ...body } = entry;
      if (entry.seq !== expectSeq) return { seq: expectSeq, reason: "missing" };
      if (digestOf(body) !== digest) return { seq: entry.seq, reason: "edited" };
      if (entry.prev !== expectPrev) return { seq: entry.seq, reason: "relinked" };
      expectSeq = entry.seq + 1;
      expectPrev = digest;
      return null;
    },
    /** After the last row: the chain must end exactly at the recorded head. */
    end(): ChainBreak | null {
      if (expectSeq - 1 !== head.seq || expectPrev !== head.digest) return { seq: Math.min(expectSeq, head.seq), reason: "head-mismatch" };
      return null;
    },
  };
}
