import { badRequest, notFound } from "../errors.js";
import type { AuditEntry } from "../schemas/audit.js";
import { createChainWalker, type ChainBreak } from "../storage/audit-chain.js";
import type { Page } from "../schemas/records.js";
import { auditListenersOf, type AuditListener } from "./audit.js";
import { asHostActor, type HostActor } from "./audit-request.js";
import type { ServiceContext } from "./context.js";

/** HCP Terraform's audit trail: pages up to 1,000 events, 1,000 when not asked. */
export const AUDIT_MAX_PAGE_SIZE = 1_000;
/** decision D26: the highest page number any list accepts. */
const MAX_PAGE_NUMBER = 1_000_000;
/** The 90 days the sweeper keeps by default (HCP keeps 14). */
export const DEFAULT_AUDIT_RETENTION_DAYS = 90;

export interface AuditListOptions {
  /** Only events after this instant: an ISO-8601 UTC time (`2026-01-02T03:04:05.000Z`), as HCP's `since`. */
  since?: string;
  /** Page number from 1 and size 1..1,000 (default 1 and 1,000). */
  page?: { number?: number; size?: number };
}

/** The result of walking one organization's chain: where it broke, or null. */
export interface AuditVerification {
  organization: string;
  events: number;
  /** The newest event's digest: keep it somewhere the database's writers cannot reach (D53). */
  headDigest: string | null;
  broken: ChainBreak | null;
  /**
   * The events before the chain's stored start, removed by retention (0: none). Anyone who can write
   * the database can claim more were pruned than the retention allowed; compare with what you expect.
   */
  pruned: number;
  /**
   * Asked with a digest kept elsewhere (a head printed earlier): the seq of the event that has it,
   * or null when no event of the chain has it (the chain was rewritten, or pruned past it).
   */
  expected?: { digest: string; seq: number | null };
}

// Strict ISO-8601 UTC with optional fraction: anything looser is a clear 400, never a guess.
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]00:?00)$/;

/** `since` as milliseconds, or a 400 naming the parameter. */
export function parseSince(since: string | undefined): number | undefined {
  if (since === undefined) return undefined;
  const ms = ISO_UTC.test(since) ? Date.parse(since) : Number.NaN;
  // Date.parse rolls a day the month does not have (February 30) over into the next month.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 19) !== since.slice(0, 19)) throw badRequest("since must be an ISO-8601 UTC time such as 2026-01-02T03:04:05.000Z", "since");
  return ms;
}

function pageOf(options: AuditListOptions["page"] = {}): { number: number; size: number } {
  const number = options.number ?? 1;
  const size = options.size ?? AUDIT_MAX_PAGE_SIZE;
  if (!Number.isSafeInteger(number) || number < 1 || number > MAX_PAGE_NUMBER) throw badRequest(`page[number] must be an integer between 1 and ${MAX_PAGE_NUMBER}`, "page[number]");
  if (!Number.isSafeInteger(size) || size < 1 || size > AUDIT_MAX_PAGE_SIZE) throw badRequest(`page[size] must be an integer between 1 and ${AUDIT_MAX_PAGE_SIZE}`, "page[size]");
  return { number, size };
}

/**
 * decision D53: the audit trail for the host's code: `list` (what the API route serves), `on("audit",
 * listener)` after every recorded change (for shipping events to a SIEM; an event whose write did not
 * apply is never heard), `verify` (walks each chain), `prune` (what the sweeper runs).
 */
export function createAuditTrail(ctx: ServiceContext) {
  const store = () => {
    const audit = ctx.storage.audit;
    if (!audit) throw notFound();
    return audit;
  };
  return {
    async list(organization: string, options: AuditListOptions = {}): Promise<Page<AuditEntry> & { page: { number: number; size: number } }> {
      const sinceMs = parseSince(options.since);
      const page = pageOf(options.page);
      const result = await store().list(organization, { ...(sinceMs === undefined ? {} : { sinceMs }), offset: (page.number - 1) * page.size, limit: page.size });
      return { ...result, page };
    },
    /**
     * Runs `fn` with `actor` (the host's own user or service) as the actor of every change it makes
     * (a team raised to owners through `runplane.directory`): recorded as kind `host`, never `system`.
     */
    as<R>(actor: HostActor, fn: () => R): R {
      return asHostActor(actor, fn);
    },
    /** Calls `listener` with every event recorded through this instance; resolves a function that stops it. */
    on(event: "audit", listener: AuditListener): () => void {
      if (event !== "audit") throw new TypeError(`audit.on: unknown event ${JSON.stringify(event)}`);
      const listeners = auditListenersOf(ctx.storage);
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    /**
     * Walks the chain of `organization` (every organization when omitted) and names the first break
     * of each. `expect`: a head digest kept elsewhere, which the chain must still hold (a chain
     * rewritten whole, head included, links again; only an outside copy tells).
     */
    async verify(organization?: string, options: { expect?: string } = {}): Promise<AuditVerification[]> {
      const audit = store();
      const directory = ctx.storage.organizations;
      // Every organization with a trail and, where the storage lists them, every one of the directory:
      // an organization whose whole trail (events and head) was deleted has no head to be found by.
      const organizations = organization === undefined ? [...new Set([...(await audit.organizations()), ...((await directory.names?.()) ?? [])])].sort() : [organization];
      const out: AuditVerification[] = [];
      for (const name of organizations) out.push(await verifyOne(audit, name, options.expect, async () => (await directory.get(name)) !== null));
      return out;
    },
    /** Removes events older than `retentionDays`, at most `batch` per call; resolves how many went. */
    async prune(retentionDays = DEFAULT_AUDIT_RETENTION_DAYS, batch = 1_000): Promise<number> {
      const audit = ctx.storage.audit;
      if (!audit) return 0;
      return audit.prune(ctx.now().getTime() - retentionDays * 86_400_000, batch);
    },
  };
}
export type AuditTrail = ReturnType<typeof createAuditTrail>;

const SCAN = 1_000;

async function verifyOne(audit: NonNullable<ServiceContext["storage"]["audit"]>, organization: string, expect: string | undefined, exists: () => Promise<boolean>): Promise<AuditVerification> {
  const head = await audit.head(organization);
  const expected = expect === undefined ? undefined : { digest: expect, seq: head && head.prunedSeq > 0 && head.prunedDigest === expect ? head.prunedSeq : null };
  const answer = (events: number, broken: ChainBreak | null): AuditVerification => ({ organization, events, headDigest: head?.digest ?? null, broken, pruned: head?.prunedSeq ?? 0, ...(expected ? { expected } : {}) });
  // decision D53: an organization's creation is its trail's first event, so one that exists has a trail.
  if (!head) {
    // Events without a head: the head row was deleted, which hides them from every read but this one.
    const [first] = await audit.scan(organization, 0, 1);
    if (first) return answer(0, { seq: first.stored?.seq ?? first.seq, reason: "no-head" });
    return answer(0, (await exists()) ? { seq: 1, reason: "no-trail" } : null);
  }
  const walker = createChainWalker(head, organization);
  let events = 0;
  for (let after = head.prunedSeq; ; ) {
    const rows = await audit.scan(organization, after, SCAN);
    for (const row of rows) {
      const broken = walker.next(row);
      if (broken) return answer(events, broken);
      if (expected && row.digest === expect) expected.seq = row.seq;
      events++;
    }
    if (rows.length < SCAN) break;
    after = rows.at(-1)!.seq;
  }
  return answer(events, walker.end());
}
