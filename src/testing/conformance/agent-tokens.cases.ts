import { describe, expect, it } from "vitest";
import type { AgentTokenRecord } from "../../schemas/records.js";
import { race, wins, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";

const POOL = "apool-AAAAAAAAAAAAAAAA";
const POOL2 = "apool-BBBBBBBBBBBBBBBB";
const id = (n: number): string => `at-${String(n).padStart(16, "0")}`;
const digest = (n: number): string => n.toString(16).padStart(64, "0");

/** Every field set to a non-default value, so a dropped column shows. */
function agentToken(overrides: Partial<AgentTokenRecord> = {}): AgentTokenRecord {
  return {
    id: id(1),
    agentPoolId: POOL,
    organization: "acme",
    description: "build agents",
    digest: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    createdAt: at(0),
    lastUsedAt: null,
    createdByType: "users",
    createdById: "user-0000000000000001",
    ...overrides,
  };
}

function agentTokenHelpers(ctx: ConformanceContext) {
  const tokens = () => ctx.storage.agentTokens;
  const a = agentToken();
  return { tokens, a };
}

function agentTokenCases1(ctx: ConformanceContext, h: ReturnType<typeof agentTokenHelpers>): void {
  const { tokens, a } = h;

  describe("agent tokens: insert, get, findByDigest", () => {
    it("resolves null for an unknown id or digest", async () => {
      expect(await tokens().get("at-unknown")).toBeNull();
      expect(await tokens().findByDigest(digest(7))).toBeNull();
    });

    it("returns an inserted token unchanged by id and by digest", async () => {
      const b = agentToken({ id: id(2), digest: digest(2), createdByType: "teams", createdById: "team-1", lastUsedAt: at(9) });
      const c = agentToken({ id: id(3), digest: digest(3), createdByType: "organizations", createdById: "acme", agentPoolId: POOL2 });
      for (const record of [a, b, c]) expect(await tokens().insert(record)).toBe(true);
      for (const record of [a, b, c]) {
        expect(await tokens().get(record.id)).toStrictEqual(record);
        expect(await tokens().findByDigest(record.digest)).toStrictEqual(record);
      }
    });

    it("matches digests exactly: another case of the same hex finds nothing", async () => {
      const upper = agentToken({ digest: "ABCDEF".padEnd(64, "0") });
      await tokens().insert(upper);
      expect(await tokens().findByDigest(upper.digest.toLowerCase())).toBeNull();
    });

    it("refuses an insert whose id is taken and keeps the first token", async () => {
      await tokens().insert(a);
      expect(await tokens().insert({ ...a, digest: digest(2), description: "other" })).toBe(false);
      expect(await tokens().get(a.id)).toStrictEqual(a);
      expect(await tokens().findByDigest(digest(2))).toBeNull();
    });

    it("refuses an insert whose digest is taken, writing nothing", async () => {
      await tokens().insert(a);
      expect(await tokens().insert({ ...a, id: id(2), agentPoolId: POOL2 })).toBe(false);
      expect(await tokens().get(id(2))).toBeNull();
      expect(await tokens().findByDigest(a.digest)).toStrictEqual(a);
      expect((await tokens().listByPool(POOL2, { offset: 0, limit: 10 }, "asc")).total).toBe(0);
    });

    it("lets exactly one of 20 racing inserts of the same id win", async () => {
      const results = await race(20, (i) => tokens().insert({ ...a, digest: digest(100 + i) }));
      expect(wins(results)).toBe(1);
      expect((await tokens().get(a.id))?.digest).toBe(digest(100 + results.indexOf(true)));
      expect((await tokens().listByPool(POOL, { offset: 0, limit: 100 }, "asc")).total).toBe(1);
    });

    it("lets exactly one of 20 racing inserts of the same digest win", async () => {
      const results = await race(20, (i) => tokens().insert({ ...a, id: id(100 + i) }));
      expect(wins(results)).toBe(1);
      expect((await tokens().findByDigest(a.digest))?.id).toBe(id(100 + results.indexOf(true)));
      expect((await tokens().listByPool(POOL, { offset: 0, limit: 100 }, "asc")).total).toBe(1);
    });
  });
}

function agentTokenCases2(ctx: ConformanceContext, h: ReturnType<typeof agentTokenHelpers>): void {
  const { tokens, a } = h;

  describe("agent tokens: listByPool", () => {
    // createdAt order disagrees with id order, and three rows tie on createdAt.
    const rows: AgentTokenRecord[] = [
      agentToken({ id: id(9), digest: digest(9), createdAt: at(1) }),
      agentToken({ id: id(5), digest: digest(5), createdAt: at(2) }),
      agentToken({ id: id(7), digest: digest(7), createdAt: at(2) }),
      agentToken({ id: id(6), digest: digest(6), createdAt: at(2) }),
      agentToken({ id: id(1), digest: digest(1), createdAt: at(3) }),
    ];
    const ascending = [rows[0], rows[1], rows[3], rows[2], rows[4]]; // ids 9, 5, 6, 7, 1
    const descending = [...ascending].reverse(); // ids 1, 7, 6, 5, 9: ties by id descending too
    const seed = async (): Promise<void> => {
      for (const index of [2, 4, 0, 3, 1]) await tokens().insert(rows[index]!);
      await tokens().insert(agentToken({ id: id(20), digest: digest(20), agentPoolId: POOL2, createdAt: at(2) }));
    };
    const all = { offset: 0, limit: 100 };

    it("orders asc by createdAt, then id", async () => {
      await seed();
      expect(await tokens().listByPool(POOL, all, "asc")).toStrictEqual({ items: ascending, total: 5 });
    });

    it("orders desc as the exact reverse: createdAt descending, then id descending", async () => {
      await seed();
      expect(await tokens().listByPool(POOL, all, "desc")).toStrictEqual({ items: descending, total: 5 });
    });

    it("pages with offset and limit in either order and reports the pool's total", async () => {
      await seed();
      for (const [order, expected] of [["asc", ascending], ["desc", descending]] as const) {
        expect(await tokens().listByPool(POOL, { offset: 0, limit: 2 }, order)).toStrictEqual({ items: expected.slice(0, 2), total: 5 });
        expect(await tokens().listByPool(POOL, { offset: 2, limit: 2 }, order)).toStrictEqual({ items: expected.slice(2, 4), total: 5 });
        expect(await tokens().listByPool(POOL, { offset: 4, limit: 2 }, order)).toStrictEqual({ items: expected.slice(4), total: 5 });
      }
    });

    it("returns no items but the total for a page past the end", async () => {
      await seed();
      expect(await tokens().listByPool(POOL, { offset: 5, limit: 20 }, "asc")).toStrictEqual({ items: [], total: 5 });
      expect(await tokens().listByPool(POOL, { offset: 500, limit: 20 }, "desc")).toStrictEqual({ items: [], total: 5 });
    });

    it("lists only the pool's own tokens, and nothing for a pool without tokens", async () => {
      await seed();
      expect((await tokens().listByPool(POOL2, all, "asc")).items.map((t) => t.id)).toStrictEqual([id(20)]);
      expect(await tokens().listByPool("apool-none", all, "asc")).toStrictEqual({ items: [], total: 0 });
    });

    it("leaves a deleted token out of the list and the total", async () => {
      await seed();
      await tokens().delete(id(6));
      expect((await tokens().listByPool(POOL, all, "asc")).items.map((t) => t.id)).toStrictEqual([id(9), id(5), id(7), id(1)]);
      expect((await tokens().listByPool(POOL, all, "asc")).total).toBe(4);
    });
  });
}

function agentTokenCases3(ctx: ConformanceContext, h: ReturnType<typeof agentTokenHelpers>): void {
  const { tokens, a } = h;

  describe("agent tokens: touch", () => {
    it("sets lastUsedAt and nothing else", async () => {
      await tokens().insert(a);
      expect(await tokens().touch(a.id, at(30))).toBe(true);
      expect(await tokens().get(a.id)).toStrictEqual({ ...a, lastUsedAt: at(30) });
      expect(await tokens().touch(a.id, at(45))).toBe(true);
      expect(await tokens().findByDigest(a.digest)).toStrictEqual({ ...a, lastUsedAt: at(45) });
    });

    it("never moves lastUsedAt back: an earlier instant is true but keeps the later one", async () => {
      await tokens().insert(a);
      await tokens().touch(a.id, at(45));
      expect(await tokens().touch(a.id, at(30))).toBe(true);
      expect((await tokens().get(a.id))?.lastUsedAt).toBe(at(45));
    });

    it("is false for a token that does not exist and creates nothing", async () => {
      expect(await tokens().touch(a.id, at(30))).toBe(false);
      expect(await tokens().get(a.id)).toBeNull();
    });

    it("keeps the latest of 20 racing touches, whatever order they land in", async () => {
      await tokens().insert(a);
      const seconds = Array.from({ length: 20 }, (_, i) => (i * 7) % 20); // a permutation of 0..19
      const results = await race(20, (i) => tokens().touch(a.id, at(10 + seconds[i]!)));
      expect(results.every((r) => r)).toBe(true);
      expect(await tokens().get(a.id)).toStrictEqual({ ...a, lastUsedAt: at(29) });
    });

    it("never brings back a token that racing touches meet being deleted", async () => {
      await tokens().insert(a);
      const results = await Promise.all([
        ...Array.from({ length: 5 }, (_, i) => tokens().touch(a.id, at(i))),
        tokens().delete(a.id),
        ...Array.from({ length: 5 }, (_, i) => tokens().touch(a.id, at(10 + i))),
      ]);
      expect(results[5]).toBe(true);
      expect(await tokens().get(a.id)).toBeNull();
      expect(await tokens().findByDigest(a.digest)).toBeNull();
      expect(await tokens().touch(a.id, at(59))).toBe(false);
      expect(await tokens().get(a.id)).toBeNull();
    });
  });

  describe("agent tokens: delete", () => {
    it("deletes once: true, then false; neither id nor digest finds it again", async () => {
      await tokens().insert(a);
      expect(await tokens().delete(a.id)).toBe(true);
      expect(await tokens().get(a.id)).toBeNull();
      expect(await tokens().findByDigest(a.digest)).toBeNull();
      expect(await tokens().delete(a.id)).toBe(false);
    });

    it("is false for an unknown id and removes nothing else", async () => {
      await tokens().insert(a);
      expect(await tokens().delete(id(2))).toBe(false);
      expect(await tokens().get(a.id)).toStrictEqual(a);
    });

    it("lets exactly one of 10 racing deletes report true", async () => {
      await tokens().insert(a);
      expect(wins(await race(10, () => tokens().delete(a.id)))).toBe(1);
      expect(await tokens().get(a.id)).toBeNull();
    });
  });
}

function agentTokenCases4(ctx: ConformanceContext, h: ReturnType<typeof agentTokenHelpers>): void {
  const { tokens, a } = h;

  describe("agent tokens: durability", () => {
    it("keeps inserts, touches and deletes through a reopen", async () => {
      const b = agentToken({ id: id(2), digest: digest(2), createdAt: at(1), createdByType: "organizations", createdById: "acme" });
      const c = agentToken({ id: id(3), digest: digest(3), createdAt: at(2) });
      for (const record of [a, b, c]) await tokens().insert(record);
      await tokens().touch(a.id, at(30));
      await tokens().delete(c.id);
      await ctx.reopen();
      expect(await tokens().findByDigest(a.digest)).toStrictEqual({ ...a, lastUsedAt: at(30) });
      expect(await tokens().get(b.id)).toStrictEqual(b);
      expect(await tokens().get(c.id)).toBeNull();
      expect(await tokens().findByDigest(c.digest)).toBeNull();
      expect(await tokens().listByPool(POOL, { offset: 0, limit: 10 }, "desc")).toStrictEqual({
        items: [b, { ...a, lastUsedAt: at(30) }],
        total: 2,
      });
      expect(await tokens().insert({ ...a, id: id(4) })).toBe(false);
      expect(await tokens().touch(a.id, at(10))).toBe(true);
      expect((await tokens().get(a.id))?.lastUsedAt).toBe(at(30));
    });
  });
}

export function describeAgentTokenCases(ctx: ConformanceContext): void {
  const h = agentTokenHelpers(ctx);
  agentTokenCases1(ctx, h);
  agentTokenCases2(ctx, h);
  agentTokenCases3(ctx, h);
  agentTokenCases4(ctx, h);
}
