import { describe, expect, it } from "vitest";
import type { AuditEntry, AuditEvent, ScannedAuditEntry } from "../../schemas/audit.js";
import { GENESIS_DIGEST } from "../../storage/audit-chain.js";
import { withAuditEvent } from "../../storage/audit-scope.js";
import type { AuditStore } from "../../storage/audit-types.js";
import { auditEvent, T0, walkChain } from "./audit-fixtures.js";
import { describeAuditSinceCases } from "./audit-since.cases.js";
import { race, type ConformanceContext } from "./context.js";
import { organization, team, variable } from "./fixtures.js";

export { auditEvent, walkChain } from "./audit-fixtures.js";

// The event as the core built it: without the chain fields, and without the columns `scan` adds beside them.
const strip = ({ seq: _s, prev: _p, digest: _d, stored: _c, ...event }: ScannedAuditEntry): AuditEvent => event;

export function describeAuditCases(ctx: ConformanceContext): void {
  const audit = (): AuditStore => {
    const store = ctx.storage.audit;
    if (!store) throw new Error("conformance: this storage has no audit store");
    return store;
  };
  describeChainCases(ctx, audit);
  describeListCases(audit);
  describeAuditSinceCases(audit);
  describeRecordedCases(ctx, audit);
}

function describeChainCases(ctx: ConformanceContext, audit: () => AuditStore): void {

  describe("audit: the chain", () => {
    it("stores events as given and links each to its organization's previous one", async () => {
      const first = await audit().append(auditEvent(1));
      const second = await audit().append(auditEvent(2));
      const other = await audit().append(auditEvent(3, { organization: "globex" }));
      expect(strip(first)).toStrictEqual(auditEvent(1));
      expect([first.seq, first.prev, second.seq, second.prev]).toStrictEqual([1, GENESIS_DIGEST, 2, first.digest]);
      expect([other.seq, other.prev]).toStrictEqual([1, GENESIS_DIGEST]);
      expect(await walkChain(audit(), "acme")).toBeNull();
      expect(await audit().organizations()).toStrictEqual(["acme", "globex"]);
    });

    it("never puts an event before its predecessor in time (a lagging clock records the predecessor's time)", async () => {
      await audit().append(auditEvent(5));
      const late = await audit().append(auditEvent(6, { at: T0 }));
      expect(late.at).toBe(T0 + 5000);
      expect(await walkChain(audit(), "acme")).toBeNull();
    });

    it("keeps one linear chain when many appends race", async () => {
      await race(24, (i) => audit().append(auditEvent(i + 1)));
      const page = await audit().list("acme", { offset: 0, limit: 100 });
      expect(page.items.map((e) => e.seq)).toStrictEqual(Array.from({ length: 24 }, (_, i) => i + 1));
      expect(await walkChain(audit(), "acme")).toBeNull();
    });

    // decision D59: the SQL adapters assemble the stored text in the database from linkPieces;
    // what any value holds (quotes, escapes, other scripts, text that looks like a key) stays put.
    it("stores and links an event whose values hold quotes, escapes, other scripts and key-like text", async () => {
      const odd = '"prev":"x","seq":9,\\ \u2028 \u00e9\u00df\u4e2d \ud83d\udd11 \t\u0001 }{';
      const event = auditEvent(1, { action: odd, resource: { type: "var", id: odd }, changes: [{ field: odd, old: odd, new: 3.5 }, { field: "k", old: null, new: true }] });
      const stored = await audit().append(event);
      const next = await audit().append(auditEvent(2));
      expect(strip(stored)).toStrictEqual(event);
      expect(next.prev).toBe(stored.digest);
      expect((await audit().scan("acme", 0, 10)).map(strip)).toStrictEqual([event, auditEvent(2)]);
      expect(await walkChain(audit(), "acme")).toBeNull();
    });

    it("keeps its events when reopened", async () => {
      await audit().append(auditEvent(1));
      const reopened = await ctx.reopen();
      expect((await reopened.audit!.list("acme", { offset: 0, limit: 10 })).total).toBe(1);
      expect(await walkChain(reopened.audit!, "acme")).toBeNull();
    });
  });

}

function describeListCases(audit: () => AuditStore): void {
  describe("audit: listing", () => {
    it("lists one organization's events oldest first, a page at a time, with the total", async () => {
      for (let n = 1; n <= 7; n++) await audit().append(auditEvent(n));
      await audit().append(auditEvent(8, { organization: "globex" }));
      const page = await audit().list("acme", { offset: 2, limit: 3 });
      expect(page.total).toBe(7);
      expect(page.items.map((e) => e.id)).toStrictEqual([3, 4, 5].map((n) => auditEvent(n).id));
      expect((await audit().list("acme", { offset: 6, limit: 3 })).items.map((e) => e.seq)).toStrictEqual([7]);
      expect((await audit().list("initech", { offset: 0, limit: 3 })).total).toBe(0);
    });

    it("lists only events later than since", async () => {
      for (let n = 1; n <= 5; n++) await audit().append(auditEvent(n));
      const page = await audit().list("acme", { sinceMs: T0 + 3000, offset: 0, limit: 10 });
      expect(page.items.map((e) => e.seq)).toStrictEqual([4, 5]);
      expect(page.total).toBe(2);
      expect((await audit().list("acme", { sinceMs: T0 + 9000, offset: 0, limit: 10 })).total).toBe(0);
    });
  });

  describe("audit: retention", () => {
    it("prunes the oldest events in bounded batches and the rest still verifies", async () => {
      for (let n = 1; n <= 6; n++) await audit().append(auditEvent(n));
      await audit().append(auditEvent(2, { organization: "globex" }));
      expect(await audit().prune(T0 + 4500, 2)).toBe(2);
      const removed = await audit().prune(T0 + 4500, 10);
      expect(removed).toBe(3);
      expect(await audit().prune(T0 + 4500, 10)).toBe(0);
      expect((await audit().list("acme", { offset: 0, limit: 10 })).items.map((e) => e.seq)).toStrictEqual([5, 6]);
      expect((await audit().list("globex", { offset: 0, limit: 10 })).total).toBe(0);
      expect(await walkChain(audit(), "acme")).toBeNull();
      expect(await walkChain(audit(), "globex")).toBeNull();
      expect((await audit().append(auditEvent(9))).seq).toBe(7);
      expect(await walkChain(audit(), "acme")).toBeNull();
    });
  });

}

function describeRecordedCases(ctx: ConformanceContext, audit: () => AuditStore): void {
  describe("audit: recorded with the change", () => {
    it("records the event of a write that applied, in the same step", async () => {
      const record = variable();
      expect(await withAuditEvent(auditEvent(1), () => ctx.storage.variables.insert(record))).toStrictEqual({ ok: true });
      const page = await audit().list("acme", { offset: 0, limit: 10 });
      expect(page.items.map(strip)).toStrictEqual([auditEvent(1)]);
    });

    it("records nothing for a write that was refused", async () => {
      const record = variable();
      await ctx.storage.variables.insert(record);
      const again = variable({ id: "var-0000000000000002" });
      expect(await withAuditEvent(auditEvent(1), () => ctx.storage.variables.insert(again))).toStrictEqual({ ok: false, reason: "duplicate-key" });
      expect(await withAuditEvent(auditEvent(2), () => ctx.storage.variables.update(record, "stale-version"))).toStrictEqual({ ok: false, reason: "stale" });
      expect(await withAuditEvent(auditEvent(3), () => ctx.storage.variables.delete({ kind: "workspace", id: "ws-none" }, record.id))).toBe(false);
      expect((await audit().list("acme", { offset: 0, limit: 10 })).total).toBe(0);
    });

    it("records a directory write's event with it: a team created, changed and deleted, an organization changed, and not a refused one", async () => {
      await ctx.storage.organizations.insert(organization("acme"));
      const record = team("team-ops", "acme");
      expect(await withAuditEvent(auditEvent(1), () => ctx.storage.teams.insert(record))).toBe(true);
      expect(await withAuditEvent(auditEvent(2), () => ctx.storage.teams.insert(record))).toBe(false);
      expect(await withAuditEvent(auditEvent(3), () => ctx.storage.teams.replace({ ...record, owners: true }))).toBe(true);
      expect(await withAuditEvent(auditEvent(4), () => ctx.storage.teams.delete(record.id))).toBe(true);
      expect(await withAuditEvent(auditEvent(5), () => ctx.storage.teams.delete(record.id))).toBe(false);
      expect(await withAuditEvent(auditEvent(6), () => ctx.storage.organizations.replace(organization("acme", { email: "sec@acme.example" })))).toBe(true);
      expect(await withAuditEvent(auditEvent(7), () => ctx.storage.organizations.insert(organization("acme")))).toBe(false);
      expect((await audit().list("acme", { offset: 0, limit: 10 })).items.map((e) => e.id)).toStrictEqual([1, 3, 4, 6].map((n) => auditEvent(n).id));
    });

    // audit verify walks every organization: optional for a custom adapter; test/audit/verify-missing-trail.test.ts requires it of the bundled ones.
    it("lists every organization's name, sorted, and not a deleted one (when it lists them)", async () => {
      const { names } = ctx.storage.organizations;
      if (!names) return;
      for (const name of ["zeta", "acme", "mid"]) await ctx.storage.organizations.insert(organization(name));
      await ctx.storage.organizations.delete("mid");
      expect(await names.call(ctx.storage.organizations)).toStrictEqual(["acme", "zeta"]);
    });

    it("gives the event to one write only", async () => {
      await withAuditEvent(auditEvent(1), async () => {
        await ctx.storage.variables.insert(variable());
        await ctx.storage.variables.insert(variable({ id: "var-0000000000000002", key: "other" }));
      });
      expect((await audit().list("acme", { offset: 0, limit: 10 })).total).toBe(1);
    });
  });
}
