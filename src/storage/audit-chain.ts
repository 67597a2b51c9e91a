import { hash } from "node:crypto";
import type { AuditEntry, AuditEvent, ScannedAuditEntry } from "../schemas/audit.js";

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

/**
 * JSON with object keys sorted (code-unit order), so the same event always has the same bytes. A
 * value whose objects already list their keys in that order (the core builds events so) is plain
 * JSON.stringify, six times faster than re-sorting; any other goes through a replacer that sorts.
 * (An event's objects never have integer-like keys, which a JS object would list first.)
 */
export function canonicalJson(value: unknown): string {
  return (inCanonicalOrder(value) ? JSON.stringify(value) : JSON.stringify(value, sortedKeys)) ?? "null";
}

/** Whether JSON.stringify would already write `value` canonically: own keys in sorted order all the way down, no toJSON. */
function inCanonicalOrder(value: unknown): boolean {
  if (value === null || typeof value !== "object") return true;
  if (Array.isArray(value)) return value.every(inCanonicalOrder);
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
  let previous: string | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key) || (previous !== undefined && !(previous < key))) return false;
    if (!inCanonicalOrder((value as Record<string, unknown>)[key])) return false;
    previous = key;
  }
  return true;
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = (value as Record<string, unknown>)[key];
  return sorted;
}

/** The digest of an entry's body: everything but the digest itself. */
export function digestOf(entry: Omit<AuditEntry, "digest">): string {
  return digestOfText(canonicalJson(entry));
}

/**
 * The entry `event` becomes after `head`: the next seq, `head`'s digest as `prev`, and a time no
 * earlier than the head's (a host whose clock lags must not put an event before its predecessor,
 * or `since` would skip it). Returns the entry and the new head.
 */
export function linkEvent(event: AuditEvent, head: AuditHead): { entry: AuditEntry; head: AuditHead; text: string } {
  const body = { ...event, at: Math.max(event.at, head.at), seq: head.seq + 1, prev: head.digest };
  // `text` is what the digest covers; SQL adapters store it as the row's body (no second serialization).
  const text = canonicalJson(body);
  const entry: AuditEntry = { ...body, digest: digestOfText(text) };
  return { entry, head: { ...head, seq: entry.seq, digest: entry.digest, at: entry.at }, text };
}

/**
 * decision D59: `linkEvent`'s text with the three values the head decides left open: four pieces
 * that, joined around the linked `at`, `prev` and `seq` (in that order, the order of the sorted
 * keys), are exactly that text. The SQL adapters send the pieces with their one insert: the
 * database fills them in from the head it holds and digests the result, so linking an event costs
 * no read of the head before it. Built key by key, never by replacing a marker in the text, so no
 * value of the event can move a piece.
 */
export function linkPieces(event: AuditEvent): [string, string, string, string] {
  const keys = Object.keys(event);
  if (!Object.hasOwn(event, "prev")) keys.push("prev");
  if (!Object.hasOwn(event, "seq")) keys.push("seq");
  const pieces: string[] = [];
  let text = "{";
  let comma = "";
  for (const key of keys.sort()) {
    const value = (event as unknown as Record<string, unknown>)[key];
    const open = key === "prev" || key === "seq" || key === "at";
    if (value === undefined && !open) continue; // JSON.stringify leaves such a key out; so does the text
    text += `${comma}${JSON.stringify(key)}:`;
    comma = ",";
    if (key === "prev") {
      pieces.push(`${text}"`);
      text = `"`;
    } else if (open) {
      pieces.push(text);
      text = "";
    } else text += canonicalJson(value);
  }
  pieces.push(`${text}}`);
  return pieces as [string, string, string, string];
}

/** The digest of a body's text (SHA-256, hex): what `linkEvent` computes, and SQLite's `rp_audit_digest`. */
export function digestOfText(text: string): string {
  // One-shot (Node >= 20.12, the engines' floor): no Hash object per event.
  return hash("sha256", text, "hex");
}

/** The first place a chain stops holding, or null when every row links. */
export interface ChainBreak {
  seq: number;
  /** `no-trail`: the organization exists but its trail (events and head) does not; `no-head`: events without their head row. */
  reason: "edited" | "missing" | "relinked" | "head-mismatch" | "no-trail" | "no-head" | "moved";
}

/**
 * Walks rows of one organization in `seq` order from where the pruned prefix ended, and names the
 * first break: a row whose digest does not match its body (`edited`), a gap in `seq` (`missing`), a
 * row whose `prev` is not its predecessor's digest (`relinked`), or a chain that ends before or
 * after the head the storage recorded (`head-mismatch`, the newest rows deleted).
 */
export function createChainWalker(head: AuditHead, organization?: string) {
  let expectSeq = head.prunedSeq + 1;
  let expectPrev = head.prunedDigest;
  return {
    /** Checks the next row; a break, or null. */
    next(entry: ScannedAuditEntry): ChainBreak | null {
      const { digest, stored, unreadable, ...body } = entry;
      if (entry.seq !== expectSeq) return { seq: expectSeq, reason: "missing" };
      if (unreadable) return { seq: entry.seq, reason: "edited" };
      if (digestOf(body) !== digest) return { seq: entry.seq, reason: "edited" };
      // Another organization's event, intact: rows copied or moved between trails (found from outside).
      if (organization !== undefined && entry.organization !== organization) return { seq: entry.seq, reason: "moved" };
      // The columns beside the body (what `since` and pages read) must say what the body says.
      if (stored && (stored.seq !== entry.seq || stored.id !== entry.id || stored.at !== entry.at)) return { seq: entry.seq, reason: "edited" };
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
