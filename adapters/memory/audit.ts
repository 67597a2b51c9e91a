import type { AuditEntry, AuditEvent } from "../../src/schemas/audit.js";
import { EMPTY_HEAD, linkEvent, type AuditHead } from "../../src/storage/audit-chain.js";
import { AUDITED_WRITES, isApplied, takeAuditEvent } from "../../src/storage/audit-scope.js";
import type { AuditStore } from "../../src/storage/audit-types.js";
import type { Storage } from "../../src/storage/types.js";
import { clone } from "./clone.js";

/** decision D53: the memory adapter's audit trail: one array and one head per organization. */
export function createMemoryAuditStore(): AuditStore & { appendNow(event: AuditEvent): AuditEntry } {
  const chains = new Map<string, { head: AuditHead; entries: AuditEntry[] }>();
  const chainOf = (organization: string) => {
    let chain = chains.get(organization);
    if (!chain) chains.set(organization, (chain = { head: EMPTY_HEAD, entries: [] }));
    return chain;
  };
  // Synchronous, so it runs in the same step as the write it records.
  const appendNow = (event: AuditEvent): AuditEntry => {
    const chain = chainOf(event.organization);
    const { entry, head } = linkEvent(clone(event), chain.head);
    chain.entries.push(entry);
    chain.head = head;
    return clone(entry);
  };
  // seq is dense from the pruned prefix on, so a page is an index range (no scan).
  const indexOfSeq = (entries: AuditEntry[], seq: number): number => (entries.length === 0 ? 0 : seq - entries[0]!.seq);
  return {
    appendNow,
    async append(event) {
      return appendNow(event);
    },
    async list(organization, { sinceMs, offset, limit }) {
      const entries = chains.get(organization)?.entries ?? [];
      const start = sinceMs === undefined ? 0 : firstAfter(entries, sinceMs);
      const items = entries.slice(start + offset, start + offset + limit).map(clone);
      return { items, total: entries.length - start };
    },
    async scan(organization, afterSeq, limit) {
      const entries = chains.get(organization)?.entries ?? [];
      const from = Math.max(0, indexOfSeq(entries, afterSeq + 1));
      return entries.slice(from, from + limit).map(clone);
    },
    async head(organization) {
      const chain = chains.get(organization);
      return chain ? { ...chain.head } : null;
    },
    async organizations() {
      return [...chains.keys()].sort();
    },
    async prune(beforeMs, limit) {
      let removed = 0;
      for (const chain of chains.values()) {
        const count = Math.min(limit - removed, firstAfter(chain.entries, beforeMs - 1));
        if (count <= 0) continue;
        const last = chain.entries[count - 1]!;
        chain.entries.splice(0, count);
        chain.head = { ...chain.head, prunedSeq: last.seq, prunedDigest: last.digest };
        removed += count;
      }
      return removed;
    },
  };
}

/** The index of the first entry later than `ms` (times never decrease along a chain). */
function firstAfter(entries: readonly AuditEntry[], ms: number): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (entries[mid]!.at > ms) high = mid;
    else low = mid + 1;
  }
  return low;
}

type AnyStore = Record<string, (...args: unknown[]) => Promise<unknown>>;

/**
 * Wraps every write of {@link AUDITED_WRITES}: the write takes the pending event when called and,
 * when it applied, the event is appended before its promise resolves. Every memory write completes
 * synchronously, so nothing can fail between the change and its event.
 */
export function withMemoryAudit(storage: Storage, audit: ReturnType<typeof createMemoryAuditStore>): Storage {
  const wrapped: Record<string, unknown> = { ...storage, audit };
  for (const [name, methods] of Object.entries(AUDITED_WRITES)) {
    const store = (storage as unknown as Record<string, AnyStore | undefined>)[name];
    if (!store) continue;
    const copy: AnyStore = Object.create(store) as AnyStore;
    for (const method of methods) {
      const write = store[method]!.bind(store);
      copy[method] = async (...args: unknown[]) => {
        const event = takeAuditEvent();
        const result = await write(...args);
        if (event && isApplied(result)) audit.appendNow(event);
        return result;
      };
    }
    wrapped[name] = copy;
  }
  return wrapped as unknown as Storage;
}
