import { describe, expect, it } from "vitest";
import type { VariableRecord, VarOwner } from "../../schemas/records.js";
import { race, wins, type ConformanceContext } from "./context.js";
import { at, PS_SAME_ID, variable, WS, WS2 } from "./fixtures.js";

const id = (n: number): string => `var-${String(n).padStart(16, "0")}`;

function variableHelpers(ctx: ConformanceContext) {
  const vars = () => ctx.storage.variables;
  const a = variable();
  return { vars, a };
}

function variableCases1(ctx: ConformanceContext, h: ReturnType<typeof variableHelpers>): void {
  const { vars, a } = h;

  describe("variables: get, insert, uniqueness", () => {
    it("resolves null for an unknown id", async () => {
      expect(await vars().get(WS, "var-unknown")).toBeNull();
    });

    it("returns an inserted variable unchanged", async () => {
      const b = variable({ id: id(2), key: "tags", value: '{ a = "b" }', category: "config", hcl: true, description: null });
      expect(await vars().insert(a)).toStrictEqual({ ok: true });
      expect(await vars().insert(b)).toStrictEqual({ ok: true });
      expect(await vars().get(WS, a.id)).toStrictEqual(a);
      expect(await vars().get(WS, b.id)).toStrictEqual(b);
    });

    it("resolves null for the id of another owner's variable, even one of the same owner id", async () => {
      await vars().insert(a);
      expect(await vars().get(WS2, a.id)).toBeNull();
      expect(await vars().get(PS_SAME_ID, a.id)).toBeNull();
    });

    it("refuses a second (owner, key, category) with duplicate-key, writing nothing", async () => {
      await vars().insert(a);
      const again = variable({ id: id(2), value: "other" });
      expect(await vars().insert(again)).toStrictEqual({ ok: false, reason: "duplicate-key" });
      expect(await vars().get(WS, again.id)).toBeNull();
      expect((await vars().list(WS)).items).toStrictEqual([a]);
    });

    it("accepts the same key in another category, under another owner, or under another owner kind", async () => {
      await vars().insert(a);
      expect(await vars().insert(variable({ id: id(2), category: "config" }))).toStrictEqual({ ok: true });
      expect(await vars().insert(variable({ id: id(3) }, WS2))).toStrictEqual({ ok: true });
      expect(await vars().insert(variable({ id: id(4), category: "env" }, PS_SAME_ID))).toStrictEqual({ ok: true });
    });

    it("compares keys exactly: keys differing in case are different keys", async () => {
      await vars().insert(a);
      expect(await vars().insert(variable({ id: id(2), key: a.key.toUpperCase() }))).toStrictEqual({ ok: true });
    });

    it("never overwrites a stored variable when an insert reuses its id", async () => {
      await vars().insert(a);
      const clash = variable({ key: "another", value: "other" });
      const result = await vars().insert(clash).catch(() => ({ ok: false }));
      expect(result.ok).toBe(false);
      expect(await vars().get(WS, a.id)).toStrictEqual(a);
    });

    it("lets exactly one of 20 racing inserts of the same (owner, key, category) win", async () => {
      const results = await race(20, (i) => vars().insert(variable({ id: id(100 + i), value: `v${i}` })));
      expect(wins(results)).toBe(1);
      expect(results.filter((r) => !r.ok)).toStrictEqual(Array(19).fill({ ok: false, reason: "duplicate-key" }));
      const winner = results.findIndex((r) => r.ok);
      expect((await vars().list(WS)).items).toStrictEqual([variable({ id: id(100 + winner), value: `v${winner}` })]);
    });

    it("frees a (key, category) once its variable is deleted", async () => {
      await vars().insert(a);
      await vars().delete(WS, a.id);
      expect(await vars().insert(variable({ id: id(2) }))).toStrictEqual({ ok: true });
    });
  });
}

function variableCases2(ctx: ConformanceContext, h: ReturnType<typeof variableHelpers>): void {
  const { vars, a } = h;

  describe("variables: list", () => {
    // createdAt order disagrees with id order, and three rows tie on createdAt.
    const rows: VariableRecord[] = [
      variable({ id: id(9), key: "k1", createdAt: at(1) }),
      variable({ id: id(5), key: "k2", createdAt: at(2) }),
      variable({ id: id(7), key: "k3", createdAt: at(2) }),
      variable({ id: id(6), key: "k4", createdAt: at(2) }),
      variable({ id: id(1), key: "k5", createdAt: at(3) }),
    ];
    const ordered = [rows[0], rows[1], rows[3], rows[2], rows[4]]; // ids 9, 5, 6, 7, 1
    const seed = async (): Promise<void> => {
      for (const index of [2, 4, 0, 3, 1]) await vars().insert(rows[index]!);
      await vars().insert(variable({ id: id(20), key: "k1" }, WS2));
      await vars().insert(variable({ id: id(21), key: "k1", category: "env" }, PS_SAME_ID));
    };

    it("lists every variable of the owner ordered by createdAt, then id, when no page is given", async () => {
      await seed();
      expect(await vars().list(WS)).toStrictEqual({ items: ordered, total: 5 });
    });

    it("pages with offset and limit and reports the owner's total", async () => {
      await seed();
      expect(await vars().list(WS, { offset: 0, limit: 2 })).toStrictEqual({ items: ordered.slice(0, 2), total: 5 });
      expect(await vars().list(WS, { offset: 2, limit: 2 })).toStrictEqual({ items: ordered.slice(2, 4), total: 5 });
      expect(await vars().list(WS, { offset: 4, limit: 2 })).toStrictEqual({ items: ordered.slice(4), total: 5 });
      expect(await vars().list(WS, { offset: 0, limit: 100 })).toStrictEqual({ items: ordered, total: 5 });
    });

    it("returns no items but the total for a page past the end", async () => {
      await seed();
      expect(await vars().list(WS, { offset: 5, limit: 20 })).toStrictEqual({ items: [], total: 5 });
      expect(await vars().list(WS, { offset: 500, limit: 20 })).toStrictEqual({ items: [], total: 5 });
    });

    it("lists nothing for an owner without variables", async () => {
      await seed();
      const none: VarOwner = { kind: "policy-set", id: "polset-none" };
      expect(await vars().list(none)).toStrictEqual({ items: [], total: 0 });
      expect(await vars().list(none, { offset: 0, limit: 20 })).toStrictEqual({ items: [], total: 0 });
    });

    it("keeps owners of the same id but another kind apart", async () => {
      await seed();
      expect((await vars().list(PS_SAME_ID)).items.map((v) => v.id)).toStrictEqual([id(21)]);
      expect((await vars().list(WS2, { offset: 0, limit: 10 })).total).toBe(1);
    });
  });
}

function variableCases3(ctx: ConformanceContext, h: ReturnType<typeof variableHelpers>): void {
  const { vars, a } = h;

  describe("variables: update", () => {
    const next = (overrides: Partial<VariableRecord> = {}): VariableRecord =>
      variable({ key: "zone", value: "b", description: "changed", category: "config", hcl: true, versionId: "v2", updatedAt: at(60), ...overrides });

    it("replaces the row while the expected version matches", async () => {
      await vars().insert(a);
      expect(await vars().update(next(), a.versionId)).toStrictEqual({ ok: true });
      expect(await vars().get(WS, a.id)).toStrictEqual(next());
    });

    it("accepts an update that keeps the row's own key and category", async () => {
      await vars().insert(a);
      expect(await vars().update({ ...a, value: "new", versionId: "v2" }, a.versionId)).toStrictEqual({ ok: true });
      expect(await vars().update({ ...a, value: "newer", versionId: "v3" }, "v2")).toStrictEqual({ ok: true });
      expect((await vars().get(WS, a.id))?.value).toBe("newer");
    });

    it("refuses with stale when the version changed, writing nothing", async () => {
      await vars().insert(a);
      await vars().update(next(), a.versionId);
      expect(await vars().update(next({ value: "late", versionId: "v3" }), a.versionId)).toStrictEqual({ ok: false, reason: "stale" });
      expect(await vars().get(WS, a.id)).toStrictEqual(next());
    });

    it("refuses with missing when the row does not exist or was deleted", async () => {
      expect(await vars().update(next(), a.versionId)).toStrictEqual({ ok: false, reason: "missing" });
      await vars().insert(a);
      await vars().delete(WS, a.id);
      expect(await vars().update(next(), a.versionId)).toStrictEqual({ ok: false, reason: "missing" });
      expect(await vars().get(WS, a.id)).toBeNull();
    });

    it("refuses with missing when the record names another owner than the row's, writing nothing", async () => {
      await vars().insert(a);
      const moved = { ...next(), ownerId: WS2.id };
      expect(await vars().update(moved, a.versionId)).toStrictEqual({ ok: false, reason: "missing" });
      expect(await vars().get(WS, a.id)).toStrictEqual(a);
      expect(await vars().get(WS2, a.id)).toBeNull();
    });

    it("refuses with duplicate-key when another row of the owner holds the new key and category", async () => {
      const other = variable({ id: id(2), key: "zone", category: "config" });
      await vars().insert(a);
      await vars().insert(other);
      expect(await vars().update(next(), a.versionId)).toStrictEqual({ ok: false, reason: "duplicate-key" });
      expect(await vars().get(WS, a.id)).toStrictEqual(a);
      expect(await vars().get(WS, other.id)).toStrictEqual(other);
    });

    it("frees the old (key, category) after a rename", async () => {
      await vars().insert(a);
      await vars().update(next(), a.versionId);
      expect(await vars().insert(variable({ id: id(2) }))).toStrictEqual({ ok: true });
    });

    it("lets exactly one of 10 racing updates with the same expected version win", async () => {
      await vars().insert(a);
      const results = await race(10, (i) => vars().update(next({ value: `v${i}`, versionId: `ver-${i}` }), a.versionId));
      expect(wins(results)).toBe(1);
      expect(results.filter((r) => !r.ok)).toStrictEqual(Array(9).fill({ ok: false, reason: "stale" }));
      const winner = results.findIndex((r) => r.ok);
      expect(await vars().get(WS, a.id)).toStrictEqual(next({ value: `v${winner}`, versionId: `ver-${winner}` }));
    });

    it("lets exactly one of two rows racing to the same new key win", async () => {
      const b = variable({ id: id(2), key: "other" });
      await vars().insert(a);
      await vars().insert(b);
      const results = await Promise.all([
        vars().update({ ...a, key: "shared", versionId: "a2" }, a.versionId),
        vars().update({ ...b, key: "shared", versionId: "b2" }, b.versionId),
      ]);
      expect(wins(results)).toBe(1);
      expect(results.find((r) => !r.ok)).toStrictEqual({ ok: false, reason: "duplicate-key" });
    });
  });
}

function variableCases4(ctx: ConformanceContext, h: ReturnType<typeof variableHelpers>): void {
  const { vars, a } = h;

  describe("variables: delete", () => {
    it("deletes one variable of the owner: true, then false", async () => {
      await vars().insert(a);
      expect(await vars().delete(WS, a.id)).toBe(true);
      expect(await vars().get(WS, a.id)).toBeNull();
      expect(await vars().delete(WS, a.id)).toBe(false);
    });

    it("does not delete through another owner", async () => {
      await vars().insert(a);
      expect(await vars().delete(WS2, a.id)).toBe(false);
      expect(await vars().delete(PS_SAME_ID, a.id)).toBe(false);
      expect(await vars().get(WS, a.id)).toStrictEqual(a);
    });

    it("lets exactly one of 10 racing deletes report true", async () => {
      await vars().insert(a);
      expect(wins(await race(10, () => vars().delete(WS, a.id)))).toBe(1);
    });

    it("deletes every variable of one owner and resolves how many", async () => {
      await vars().insert(a);
      await vars().insert(variable({ id: id(2), key: "k2" }));
      await vars().insert(variable({ id: id(3), key: "k3", category: "config" }));
      await vars().insert(variable({ id: id(4) }, WS2));
      await vars().insert(variable({ id: id(5), category: "env" }, PS_SAME_ID));
      expect(await vars().deleteByOwner(WS)).toBe(3);
      expect(await vars().list(WS)).toStrictEqual({ items: [], total: 0 });
      expect((await vars().list(WS2)).total).toBe(1);
      expect((await vars().list(PS_SAME_ID)).total).toBe(1);
      expect(await vars().deleteByOwner(WS)).toBe(0);
    });

    it("splits the rows among racing deleteByOwner calls", async () => {
      for (let i = 0; i < 5; i++) await vars().insert(variable({ id: id(i), key: `k${i}` }));
      const counts = await race(4, () => vars().deleteByOwner(WS));
      expect(counts.reduce((sum, n) => sum + n, 0)).toBe(5);
    });
  });

  describe("variables: durability", () => {
    it("keeps inserts, updates and deletes through a reopen", async () => {
      const b = variable({ id: id(2), key: "k2" });
      const c = variable({ id: id(3), key: "k3" });
      const d = variable({ id: id(4) }, WS2);
      for (const record of [a, b, c, d]) await vars().insert(record);
      await vars().update({ ...b, value: "updated", versionId: "v2" }, b.versionId);
      await vars().delete(WS, c.id);
      await vars().deleteByOwner(WS2);
      await ctx.reopen();
      expect(await vars().list(WS)).toStrictEqual({ items: [a, { ...b, value: "updated", versionId: "v2" }], total: 2 });
      expect(await vars().list(WS2)).toStrictEqual({ items: [], total: 0 });
      expect(await vars().update({ ...b, versionId: "v3" }, b.versionId)).toStrictEqual({ ok: false, reason: "stale" });
      expect(await vars().insert(variable({ id: id(5) }))).toStrictEqual({ ok: false, reason: "duplicate-key" });
    });
  });
}

export function describeVariableCases(ctx: ConformanceContext): void {
  const h = variableHelpers(ctx);
  variableCases1(ctx, h);
  variableCases2(ctx, h);
  variableCases3(ctx, h);
  variableCases4(ctx, h);
}
