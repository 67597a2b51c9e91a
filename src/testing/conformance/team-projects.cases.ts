import { describe, expect, it } from "vitest";
import type { TeamProjectRecord } from "../../schemas/team-projects.js";
import { race, wins, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";

const id = (n: number): string => `tprj-${String(n).padStart(16, "0")}`;
const P1 = "prj-0000000000000001";
const P2 = "prj-0000000000000002";
const T = (n: number): string => `team-${String(n).padStart(16, "0")}`;

/** A custom grant with every permission away from its default, so a dropped field shows. */
export function teamProject(overrides: Partial<TeamProjectRecord> = {}): TeamProjectRecord {
  return {
    id: id(1),
    teamId: T(1),
    projectId: P1,
    organization: "acme",
    access: "custom",
    projectAccess: { settings: "update", teams: "read", variableSets: "read" },
    workspaceAccess: {
      runs: "plan",
      sentinelMocks: "read",
      stateVersions: "read-outputs",
      variables: "read",
      create: true,
      locking: false,
      delete: true,
      move: false,
      runTasks: true,
      policyOverrides: false,
    },
    createdAt: at(0),
    updatedAt: at(0),
    ...overrides,
  };
}

const PAGE = { offset: 0, limit: 100 };

function teamProjectHelpers(ctx: ConformanceContext) {
  const grants = () => ctx.storage.teamProjects;
  const a = teamProject();
  return { grants, a };
}

function teamProjectCases1(ctx: ConformanceContext, h: ReturnType<typeof teamProjectHelpers>): void {
  const { grants, a } = h;

  describe("team-projects: get, insert, uniqueness", () => {
    it("resolves null for an unknown id", async () => {
      expect(await grants().get("tprj-unknown")).toBeNull();
    });

    it("returns an inserted grant unchanged", async () => {
      const b = teamProject({ id: id(2), teamId: T(2), access: "read", createdAt: at(1), updatedAt: at(2) });
      expect(await grants().insert(a)).toStrictEqual({ ok: true });
      expect(await grants().insert(b)).toStrictEqual({ ok: true });
      expect(await grants().get(a.id)).toStrictEqual(a);
      expect(await grants().get(b.id)).toStrictEqual(b);
    });

    it("refuses a second grant of the same (team, project) with duplicate, writing nothing", async () => {
      await grants().insert(a);
      const again = teamProject({ id: id(2), access: "admin" });
      expect(await grants().insert(again)).toStrictEqual({ ok: false, reason: "duplicate" });
      expect(await grants().get(again.id)).toBeNull();
      expect((await grants().listByProject(P1, {}, PAGE)).items).toStrictEqual([a]);
    });

    it("accepts the same team on another project and another team on the same project", async () => {
      await grants().insert(a);
      expect(await grants().insert(teamProject({ id: id(2), projectId: P2 }))).toStrictEqual({ ok: true });
      expect(await grants().insert(teamProject({ id: id(3), teamId: T(2) }))).toStrictEqual({ ok: true });
    });

    it("compares team and project ids exactly (case-sensitive)", async () => {
      await grants().insert(a);
      expect(await grants().insert(teamProject({ id: id(2), teamId: a.teamId.toUpperCase() }))).toStrictEqual({ ok: true });
    });

    it("never overwrites a stored grant when an insert reuses its id", async () => {
      await grants().insert(a);
      const clash = teamProject({ teamId: T(9), access: "admin" });
      const result = await grants().insert(clash).catch(() => ({ ok: false }));
      expect(result.ok).toBe(false);
      expect(await grants().get(a.id)).toStrictEqual(a);
    });

    it("lets exactly one of 20 racing inserts of the same (team, project) win", async () => {
      const results = await race(20, (i) => grants().insert(teamProject({ id: id(100 + i), createdAt: at(i) })));
      expect(wins(results)).toBe(1);
      expect(results.filter((r) => !r.ok)).toStrictEqual(Array(19).fill({ ok: false, reason: "duplicate" }));
      const winner = results.findIndex((r) => r.ok);
      expect((await grants().listByProject(P1, {}, PAGE)).items).toStrictEqual([teamProject({ id: id(100 + winner), createdAt: at(winner) })]);
    });

    it("frees the (team, project) pair once its grant is deleted", async () => {
      await grants().insert(a);
      await grants().delete(a.id);
      expect(await grants().insert(teamProject({ id: id(2) }))).toStrictEqual({ ok: true });
    });
  });
}

function teamProjectCases2(ctx: ConformanceContext, h: ReturnType<typeof teamProjectHelpers>): void {
  const { grants, a } = h;

  describe("team-projects: listByProject and listForTeams", () => {
    // createdAt order disagrees with id order, and three rows tie on createdAt.
    const rows: TeamProjectRecord[] = [
      teamProject({ id: id(9), teamId: T(1), createdAt: at(1) }),
      teamProject({ id: id(5), teamId: T(2), createdAt: at(2) }),
      teamProject({ id: id(7), teamId: T(3), createdAt: at(2) }),
      teamProject({ id: id(6), teamId: T(4), createdAt: at(2) }),
      teamProject({ id: id(1), teamId: T(5), createdAt: at(3) }),
    ];
    const ordered = [rows[0]!, rows[1]!, rows[3]!, rows[2]!, rows[4]!]; // ids 9, 5, 6, 7, 1
    const seed = async (): Promise<void> => {
      for (const index of [2, 4, 0, 3, 1]) await grants().insert(rows[index]!);
      await grants().insert(teamProject({ id: id(20), teamId: T(1), projectId: P2, createdAt: at(5) }));
      await grants().insert(teamProject({ id: id(21), teamId: T(6), projectId: P2, createdAt: at(0) }));
    };

    it("lists the project's grants ordered by createdAt, then id, with the total", async () => {
      await seed();
      expect(await grants().listByProject(P1, {}, PAGE)).toStrictEqual({ items: ordered, total: 5 });
    });

    it("pages with offset and limit and reports the filtered total", async () => {
      await seed();
      expect(await grants().listByProject(P1, {}, { offset: 0, limit: 2 })).toStrictEqual({ items: ordered.slice(0, 2), total: 5 });
      expect(await grants().listByProject(P1, {}, { offset: 2, limit: 2 })).toStrictEqual({ items: ordered.slice(2, 4), total: 5 });
      expect(await grants().listByProject(P1, {}, { offset: 4, limit: 2 })).toStrictEqual({ items: ordered.slice(4), total: 5 });
    });

    it("returns no items but the total for a page past the end", async () => {
      await seed();
      expect(await grants().listByProject(P1, {}, { offset: 5, limit: 20 })).toStrictEqual({ items: [], total: 5 });
      expect(await grants().listByProject(P1, {}, { offset: 980, limit: 20 })).toStrictEqual({ items: [], total: 5 });
    });

    it("lists nothing for a project without grants", async () => {
      await seed();
      expect(await grants().listByProject("prj-none", {}, PAGE)).toStrictEqual({ items: [], total: 0 });
    });

    it("keeps only the grants of the given teams, and none for an empty team list", async () => {
      await seed();
      const visible = await grants().listByProject(P1, { teamIds: [T(4), T(1), T(6), "team-unknown"] }, PAGE);
      expect(visible).toStrictEqual({ items: [ordered[0], ordered[2]], total: 2 });
      expect(await grants().listByProject(P1, { teamIds: [T(4), T(1)] }, { offset: 1, limit: 1 })).toStrictEqual({ items: [ordered[2]], total: 2 });
      expect(await grants().listByProject(P1, { teamIds: [] }, PAGE)).toStrictEqual({ items: [], total: 0 });
    });

    it("filters by one team, alone or together with the team list", async () => {
      await seed();
      expect(await grants().listByProject(P1, { teamId: T(3) }, PAGE)).toStrictEqual({ items: [rows[2]], total: 1 });
      expect(await grants().listByProject(P1, { teamId: T(3), teamIds: [T(3), T(1)] }, PAGE)).toStrictEqual({ items: [rows[2]], total: 1 });
      expect(await grants().listByProject(P1, { teamId: T(3), teamIds: [T(1)] }, PAGE)).toStrictEqual({ items: [], total: 0 });
      expect(await grants().listByProject(P1, { teamId: T(6) }, PAGE)).toStrictEqual({ items: [], total: 0 });
    });

    it("lists the grants of some teams on one project, for the resolver", async () => {
      await seed();
      expect(await grants().listForTeams(P1, [T(5), T(1), T(6)])).toStrictEqual([rows[0], rows[4]]);
      expect(await grants().listForTeams(P2, [T(1), T(6)])).toStrictEqual([
        teamProject({ id: id(21), teamId: T(6), projectId: P2, createdAt: at(0) }),
        teamProject({ id: id(20), teamId: T(1), projectId: P2, createdAt: at(5) }),
      ]);
      expect(await grants().listForTeams(P1, [])).toStrictEqual([]);
      expect(await grants().listForTeams(P1, ["team-unknown"])).toStrictEqual([]);
    });
  });
}

function teamProjectCases3(ctx: ConformanceContext, h: ReturnType<typeof teamProjectHelpers>): void {
  const { grants, a } = h;

  describe("team-projects: update", () => {
    const next = (overrides: Partial<TeamProjectRecord> = {}): TeamProjectRecord =>
      teamProject({
        access: "admin",
        projectAccess: { settings: "delete", teams: "manage", variableSets: "write" },
        updatedAt: at(60),
        ...overrides,
      });

    it("replaces the row while the expected updatedAt matches", async () => {
      await grants().insert(a);
      expect(await grants().update(next(), a.updatedAt)).toStrictEqual({ ok: true });
      expect(await grants().get(a.id)).toStrictEqual(next());
    });

    it("keeps createdAt as inserted", async () => {
      await grants().insert(a);
      expect(await grants().update(next({ createdAt: at(59) }), a.updatedAt)).toStrictEqual({ ok: true });
      expect((await grants().get(a.id))?.createdAt).toBe(a.createdAt);
    });

    it("refuses with stale when another update won, writing nothing", async () => {
      await grants().insert(a);
      await grants().update(next(), a.updatedAt);
      expect(await grants().update(next({ access: "read", updatedAt: at(61) }), a.updatedAt)).toStrictEqual({ ok: false, reason: "stale" });
      expect(await grants().get(a.id)).toStrictEqual(next());
    });

    it("refuses with missing when the row does not exist or was deleted", async () => {
      expect(await grants().update(next(), a.updatedAt)).toStrictEqual({ ok: false, reason: "missing" });
      await grants().insert(a);
      await grants().delete(a.id);
      expect(await grants().update(next(), a.updatedAt)).toStrictEqual({ ok: false, reason: "missing" });
      expect(await grants().get(a.id)).toBeNull();
    });

    it("refuses with missing when the record names another team, project or organization, writing nothing", async () => {
      await grants().insert(a);
      for (const moved of [next({ teamId: T(2) }), next({ projectId: P2 }), next({ organization: "other" })]) {
        expect(await grants().update(moved, a.updatedAt)).toStrictEqual({ ok: false, reason: "missing" });
      }
      expect(await grants().get(a.id)).toStrictEqual(a);
    });

    it("lets exactly one of 10 racing updates with the same expected updatedAt win", async () => {
      await grants().insert(a);
      const levels = ["read", "write", "maintain", "admin", "custom"] as const;
      const results = await race(10, (i) => grants().update(next({ access: levels[i % 5]!, updatedAt: at(100 + i) }), a.updatedAt));
      expect(wins(results)).toBe(1);
      expect(results.filter((r) => !r.ok)).toStrictEqual(Array(9).fill({ ok: false, reason: "stale" }));
      const winner = results.findIndex((r) => r.ok);
      expect(await grants().get(a.id)).toStrictEqual(next({ access: levels[winner % 5]!, updatedAt: at(100 + winner) }));
    });
  });
}

function teamProjectCases4(ctx: ConformanceContext, h: ReturnType<typeof teamProjectHelpers>): void {
  const { grants, a } = h;

  describe("team-projects: delete", () => {
    it("deletes one grant: true, then false", async () => {
      await grants().insert(a);
      expect(await grants().delete(a.id)).toBe(true);
      expect(await grants().get(a.id)).toBeNull();
      expect(await grants().delete(a.id)).toBe(false);
    });

    it("lets exactly one of 10 racing deletes report true", async () => {
      await grants().insert(a);
      expect(wins(await race(10, () => grants().delete(a.id)))).toBe(1);
    });

    it("deletes every grant of a team, or on a project, and resolves how many", async () => {
      await grants().insert(a);
      await grants().insert(teamProject({ id: id(2), projectId: P2 }));
      await grants().insert(teamProject({ id: id(3), teamId: T(2) }));
      await grants().insert(teamProject({ id: id(4), teamId: T(2), projectId: P2 }));
      await grants().insert(teamProject({ id: id(5), teamId: T(3), projectId: P2 }));
      expect(await grants().deleteByTeam(T(1))).toBe(2);
      expect(await grants().listForTeams(P1, [T(1)])).toStrictEqual([]);
      expect(await grants().deleteByProject(P2)).toBe(2);
      expect((await grants().listByProject(P1, {}, PAGE)).items.map((g) => g.id)).toStrictEqual([id(3)]);
      expect(await grants().deleteByTeam(T(1))).toBe(0);
      expect(await grants().deleteByProject(P2)).toBe(0);
    });

    it("splits the rows among racing deleteByTeam and deleteByProject calls", async () => {
      for (let i = 0; i < 6; i++) await grants().insert(teamProject({ id: id(i), teamId: T(1), projectId: `prj-${i}` }));
      const counts = await race(4, (i) => (i % 2 === 0 ? grants().deleteByTeam(T(1)) : grants().deleteByProject("prj-3")));
      expect(counts.reduce((sum, n) => sum + n, 0)).toBe(6);
    });
  });

  describe("team-projects: durability", () => {
    it("keeps inserts, updates and deletes through a reopen", async () => {
      const b = teamProject({ id: id(2), teamId: T(2), access: "write" });
      const c = teamProject({ id: id(3), teamId: T(3) });
      const d = teamProject({ id: id(4), teamId: T(4), projectId: P2 });
      for (const record of [a, b, c, d]) await grants().insert(record);
      const updated = { ...b, access: "maintain" as const, updatedAt: at(30) };
      await grants().update(updated, b.updatedAt);
      await grants().delete(c.id);
      await grants().deleteByProject(P2);
      await ctx.reopen();
      expect(await grants().listByProject(P1, {}, PAGE)).toStrictEqual({ items: [a, updated], total: 2 });
      expect(await grants().listByProject(P2, {}, PAGE)).toStrictEqual({ items: [], total: 0 });
      expect(await grants().update({ ...b, updatedAt: at(31) }, b.updatedAt)).toStrictEqual({ ok: false, reason: "stale" });
      expect(await grants().insert(teamProject({ id: id(5) }))).toStrictEqual({ ok: false, reason: "duplicate" });
    });
  });
}

export function describeTeamProjectCases(ctx: ConformanceContext): void {
  const h = teamProjectHelpers(ctx);
  teamProjectCases1(ctx, h);
  teamProjectCases2(ctx, h);
  teamProjectCases3(ctx, h);
  teamProjectCases4(ctx, h);
}
