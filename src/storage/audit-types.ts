import type { AuditEntry, AuditEvent, ScannedAuditEntry } from "../schemas/audit.js";
import type { Page } from "../schemas/records.js";
import type { AuditHead } from "./audit-chain.js";

/** Which events `AuditStore.list` returns: after `sinceMs`, one page of at most 1,000. */
export interface AuditListQuery {
  /** Only events whose time is later than this (milliseconds since the epoch). */
  sinceMs?: number;
  offset: number;
  /** 1 to 1,000. */
  limit: number;
}

/**
 * decision D53: the audit trail, one hash chain per organization (`./audit-chain.ts`). Events are
 * appended by the write they describe, in its transaction (`./audit-scope.ts`), or alone with
 * `append` when nothing else is stored (a sign-in). The adapter assigns `seq`, `prev` and `digest`
 * while holding the organization's head, so concurrent writers (other hosts included) extend one
 * linear chain; every other field is stored as given.
 */
export interface AuditStore {
  /** Appends one event alone, in its own transaction; resolves the stored entry. */
  append(event: AuditEvent): Promise<AuditEntry>;
  /**
   * One page of an organization's events, oldest first (by `seq`), and how many match in all.
   * Reads by index whatever the page: page 1 and the last page of a million events cost alike.
   */
  list(organization: string, query: AuditListQuery): Promise<Page<AuditEntry>>;
  /**
   * Up to `limit` stored entries with `seq > afterSeq`, by `seq`, exactly as stored (for `verify`),
   * each with the columns a SQL adapter keeps beside its digested body (`stored`), which verify
   * checks against it: `since` and pages read those columns, and no digest covers them.
   */
  scan(organization: string, afterSeq: number, limit: number): Promise<ScannedAuditEntry[]>;
  /** Where the organization's chain stands, or null when it has no event yet. */
  head(organization: string): Promise<AuditHead | null>;
  /** Every organization with a chain, ordered by name. */
  organizations(): Promise<string[]>;
  /**
   * Removes up to `limit` of the oldest events whose time is before `beforeMs` (always a prefix of
   * each chain), records in each head where the pruned prefix ended, and resolves how many went.
   */
  prune(beforeMs: number, limit: number): Promise<number>;
}
