import { describe, expect, it } from "vitest";
import type { AuditEntry } from "../../schemas/audit.js";
import type { AuditStore } from "../../storage/audit-types.js";
import { auditEvent, walkChain } from "./audit-fixtures.js";

const T0 = Date.UTC(2026, 0, 1);

/** Appends one event of acme per time, in order; resolves the stored entries (times clamped). */
async function appendAt(audit: AuditStore, times: readonly number[], first = 1): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for (const [i, at] of times.entries()) out.push(await audit.append(auditEvent(first + i, { at })));
  return out;
}

/** The seqs and total `list` answers for `sinceMs`, one page holding them all. */
async function sinceSeqs(audit: AuditStore, sinceMs: number): Promise<{ seqs: number[]; total: number }> {
  const page = await audit.list("acme", { sinceMs, offset: 0, limit: 1000 });
  return { seqs: page.items.map((e) => e.seq), total: page.total };
}

/** What `since` must answer over `stored`: every event later than it, oldest first. */
const expected = (stored: readonly AuditEntry[], sinceMs: number) => {
  const seqs = stored.filter((e) => e.at > sinceMs).map((e) => e.seq);
  return { seqs, total: seqs.length };
};

/** Each time of `stored`, a millisecond either side, and times before and after them all. */
const probes = (stored: readonly AuditEntry[]): number[] => [
  ...new Set([T0 - 86_400_000, ...stored.flatMap((e) => [e.at - 1, e.at, e.at + 1]), T0 + 86_400_000 * 365]),
];

/**
 * `since` is the first event later than a time and every one after it (times never decrease along
 * a chain), and pruning removes a prefix of events before a time. Ties of time, clock-lagging
 * events (their time clamped up to their predecessor's), the ends of the trail and a pruned trail.
 */
export function describeAuditSinceCases(audit: () => AuditStore): void {
  describe("audit: since", () => {
    it("answers every time exactly, over ties and clock-lagging events", async () => {
      // Three events a second, each seventh from a host whose clock lags (its time clamped up).
      const times = Array.from({ length: 40 }, (_, i) => (i % 7 === 6 ? T0 : T0 + Math.floor(i / 3) * 1000));
      const stored = await appendAt(audit(), times);
      expect(stored.map((e) => e.at)).toStrictEqual(times.map((_, i) => Math.max(...times.slice(0, i + 1))));
      for (const since of probes(stored)) expect(await sinceSeqs(audit(), since), `since ${since - T0}`).toStrictEqual(expected(stored, since));
    });

    it("pages from the first later event: offsets count from it", async () => {
      const stored = await appendAt(audit(), [T0, T0 + 1000, T0 + 1000, T0 + 1000, T0 + 2000, T0 + 500, T0 + 3000]);
      const page = await audit().list("acme", { sinceMs: T0, offset: 2, limit: 2 });
      expect(page.items.map((e) => e.seq)).toStrictEqual([4, 5]);
      expect(page.total).toBe(6);
      expect(stored[5]!.at).toBe(T0 + 2000);
      const tail = await audit().list("acme", { sinceMs: T0 + 1000, offset: 1, limit: 10 });
      expect([tail.items.map((e) => e.seq), tail.total]).toStrictEqual([[6, 7], 3]);
    });

    it("finds the first and the last event, and nothing after the last", async () => {
      await appendAt(audit(), [T0 + 1000, T0 + 2000, T0 + 3000]);
      expect(await sinceSeqs(audit(), T0)).toStrictEqual({ seqs: [1, 2, 3], total: 3 });
      expect(await sinceSeqs(audit(), T0 + 2999)).toStrictEqual({ seqs: [3], total: 1 });
      expect(await sinceSeqs(audit(), T0 + 3000)).toStrictEqual({ seqs: [], total: 0 });
      expect(await sinceSeqs(audit(), T0 + 86_400_000)).toStrictEqual({ seqs: [], total: 0 });
    });

    it("finds a trail of one event, and nothing in an organization without a trail", async () => {
      await appendAt(audit(), [T0 + 1000]);
      expect(await sinceSeqs(audit(), T0)).toStrictEqual({ seqs: [1], total: 1 });
      expect(await sinceSeqs(audit(), T0 + 1000)).toStrictEqual({ seqs: [], total: 0 });
      expect((await audit().list("globex", { sinceMs: 0, offset: 0, limit: 10 })).total).toBe(0);
    });

    it("counts from the first stored event after pruning, before all and among the rest", async () => {
      const times = [1, 2, 2, 3, 3, 3, 1, 4, 5, 5].map((s) => T0 + s * 1000);
      const stored = await appendAt(audit(), times);
      expect(await audit().prune(T0 + 3000, 100)).toBe(3);
      const rest = stored.slice(3);
      for (const since of probes(stored)) expect(await sinceSeqs(audit(), since), `since ${since - T0}`).toStrictEqual(expected(rest, since));
      expect(await walkChain(audit(), "acme")).toBeNull();
    });
  });

  describe("audit: pruning by time", () => {
    it("removes events before the time only, ties at it and clamped events after it stay", async () => {
      const stored = await appendAt(audit(), [1, 2, 2, 2, 1, 3, 4].map((s) => T0 + s * 1000));
      expect(stored.map((e) => e.at - T0)).toStrictEqual([1000, 2000, 2000, 2000, 2000, 3000, 4000]);
      expect(await audit().prune(T0 + 2000, 100)).toBe(1);
      expect(await audit().prune(T0 + 2001, 2)).toBe(2);
      expect((await audit().head("acme"))?.prunedSeq).toBe(3);
      expect(await audit().prune(T0 + 2001, 100)).toBe(2);
      expect(await audit().prune(T0 + 2001, 100)).toBe(0);
      expect((await audit().list("acme", { offset: 0, limit: 10 })).items.map((e) => e.seq)).toStrictEqual([6, 7]);
      expect(await walkChain(audit(), "acme")).toBeNull();
    });

    it("removes nothing when the oldest event is not old enough, and everything when all are", async () => {
      await appendAt(audit(), [T0 + 1000, T0 + 2000]);
      await audit().append(auditEvent(9, { organization: "globex", at: T0 + 5000 }));
      expect(await audit().prune(T0 + 1000, 100)).toBe(0);
      expect(await audit().prune(T0 + 3000, 100)).toBe(2);
      expect((await audit().list("acme", { offset: 0, limit: 10 })).total).toBe(0);
      expect((await audit().head("acme"))?.prunedSeq).toBe(2);
      expect(await walkChain(audit(), "acme")).toBeNull();
      expect((await audit().append(auditEvent(3, { at: T0 }))).at).toBe(T0 + 2000);
      expect(await sinceSeqs(audit(), T0 + 1999)).toStrictEqual({ seqs: [3], total: 1 });
      expect((await audit().list("globex", { offset: 0, limit: 10 })).total).toBe(1);
    });
  });
}
