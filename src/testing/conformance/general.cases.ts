import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SEALED_COLUMNS } from "../../storage/sealed-values.js";
import type { Storage } from "../../storage/types.js";
import type { ConformanceContext } from "./context.js";
import * as fx from "./fixtures.js";

function generalCases1(ctx: ConformanceContext): void {
  describe("every method", () => {
    it("returns a promise, and resolves null or false for what is not there", async () => {
      const s = ctx.storage;
      const calls: [string, () => Promise<unknown>, unknown][] = [
        ["organizations.get", () => s.organizations.get("none"), null],
        ["organizations.replace", () => s.organizations.replace(fx.organization("none")), false],
        ["organizations.delete", () => s.organizations.delete("none"), false],
        ["users.get", () => s.users.get("none"), null],
        ["users.replace", () => s.users.replace(fx.user("none")), false],
        ["users.delete", () => s.users.delete("none"), false],
        ...directoryCalls(s),
        ["teams.listByMember", () => s.teams.listByMember("none", "none"), []],
        ["apiTokens.get", () => s.apiTokens.get("none"), null],
        ["apiTokens.findByDigest", () => s.apiTokens.findByDigest("none"), null],
        ["apiTokens.touch", () => s.apiTokens.touch("none", fx.at(0)), false],
        ["apiTokens.delete", () => s.apiTokens.delete("none"), false],
        ["variables.get", () => s.variables.get(fx.WS, "none"), null],
        ["variables.list", () => s.variables.list(fx.WS), { items: [], total: 0 }],
        ["variables.update", () => s.variables.update(fx.variable(), "none"), { ok: false, reason: "missing" }],
        ["variables.delete", () => s.variables.delete(fx.WS, "none"), false],
        ["variables.deleteByOwner", () => s.variables.deleteByOwner(fx.WS), 0],
        ...SEALED_COLUMNS.flatMap((c): [string, () => Promise<unknown>, unknown][] => [
          [`sealedValues.scan ${c}`, () => s.sealedValues.scan(c, { afterId: null, limit: 10 }), []],
          [`sealedValues.replace ${c}`, () => s.sealedValues.replace(c, "none", "a", "b"), false],
        ]),
      ];
      for (const [name, call, expected] of calls) {
        const pending = call();
        expect(pending, name).toBeInstanceOf(Promise);
        expect(await pending, name).toStrictEqual(expected);
      }
    });
  });

  describe("records", () => {
    it("come back exactly as written: no defaults, no trimming, no reinterpretation", async () => {
      const s = ctx.storage;
      const odd = [
        "",
        "  padded  ",
        "line\nbreak\ttab",
        "quote ' double \" backslash \\",
        "'); DROP TABLE variables; --",
        "ünïcødé ✓ 𝄞 🙂 漢字",
        "null",
        "{\"json\": [1, 2]}",
        "x".repeat(256 * 1024),
      ];
      for (const [index, value] of odd.entries()) {
        const record = fx.variable({
          id: `var-odd-${index}`,
          key: `key ${index} ${value.slice(0, 40)}`,
          value,
          description: value.slice(0, 512),
          createdAt: "1999-12-31T23:59:59.999Z",
          updatedAt: "2099-01-01T00:00:00.000Z",
        });
        expect(await s.variables.insert(record)).toStrictEqual({ ok: true });
        expect(await s.variables.get(fx.WS, record.id)).toStrictEqual(record);
      }
      const team = fx.team("team-odd", "acme", ["", " ", "user-ü"]);
      await s.teams.insert(team);
      expect(await s.teams.get(team.id)).toStrictEqual(team);
      expect(await s.teams.listByMember("acme", "")).toStrictEqual([team]);
    });
  });
}

function generalCases2(ctx: ConformanceContext): void {

  describe("logging", () => {
    const methods = ["log", "info", "warn", "error", "debug", "trace"] as const;
    let spies: ReturnType<typeof vi.spyOn>[] = [];
    beforeEach(() => {
      spies = methods.map((m) => vi.spyOn(console, m).mockImplementation(() => undefined));
    });
    afterEach(() => {
      for (const spy of spies) spy.mockRestore();
    });

    it("never writes record contents to the console, refused writes included", async () => {
      const s = ctx.storage;
      const SECRET = "sealed-MARKER-3c1f";
      const DIGEST = "digest-MARKER-77ab";
      const secret = fx.sensitiveVariable({ value: SECRET, key: "key-MARKER" });
      await s.variables.insert(secret);
      await s.variables.insert({ ...secret, id: "var-dup" });
      await s.variables.insert(secret).catch(() => undefined);
      await s.variables.update({ ...secret, versionId: "v2" }, "wrong");
      await s.sealedValues.replace("vars.value", secret.id, "wrong", `${SECRET}-next`);
      await s.sealedValues.replace("vars.value", secret.id, SECRET, `${SECRET}-next`);
      await s.sealedValues.scan("vars.value", { afterId: null, limit: 10 });
      await s.apiTokens.insert(fx.apiToken({ digest: DIGEST }));
      await s.apiTokens.insert(fx.apiToken({ id: "at-dup", digest: DIGEST }));
      await s.apiTokens.findByDigest(DIGEST);
      const logged = JSON.stringify(spies.flatMap((spy) => spy.mock.calls));
      expect(logged).not.toContain("MARKER");
    });
  });
}

/** Rules stated once for every method of the contract. */
export function describeGeneralCases(ctx: ConformanceContext): void {
  generalCases1(ctx);
  generalCases2(ctx);
}

function directoryCalls(s: Storage): [string, () => Promise<unknown>, unknown][] {
  const stores = {
    projects: [s.projects, fx.project("none", "none")],
    workspaces: [s.workspaces, fx.workspace("none", "none")],
    teams: [s.teams, fx.team("none", "none")],
    policySets: [s.policySets, fx.policySet("none", "none")],
    agentPools: [s.agentPools, fx.agentPool("none", "none")],
  } as const;
  return Object.entries(stores).flatMap(([name, [store, record]]) => {
    // One record type per store; the union of stores needs the cast to call with it.
    const any = store as unknown as {
      get(id: string): Promise<unknown>;
      replace(r: unknown): Promise<boolean>;
      delete(id: string): Promise<boolean>;
      listByOrganization(o: string): Promise<unknown[]>;
    };
    return [
      [`${name}.get`, () => any.get("none"), null],
      [`${name}.replace`, () => any.replace(record), false],
      [`${name}.delete`, () => any.delete("none"), false],
      [`${name}.listByOrganization`, () => any.listByOrganization("none"), []],
    ] as [string, () => Promise<unknown>, unknown][];
  });
}
