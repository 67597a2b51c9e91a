import { describe, expect, it } from "vitest";
import type { Storage } from "../../storage/types.js";
import { byId, race, wins, type ConformanceContext } from "./context.js";
import * as fx from "./fixtures.js";

/** The shape shared by every directory store: addressed by one key. */
interface KeyedStore<T> {
  get(key: string): Promise<T | null>;
  insert(record: T): Promise<boolean>;
  replace(record: T): Promise<boolean>;
  delete(key: string): Promise<boolean>;
}

interface Kind<T> {
  name: string;
  store(storage: Storage): KeyedStore<T>;
  key(record: T): string;
  make(key: string): T;
  /** The same key, every other field different. */
  change(record: T): T;
}

const ORG = "acme";

function describeKeyedStore<T extends object>(ctx: ConformanceContext, kind: Kind<T>): void {
  const store = (): KeyedStore<T> => kind.store(ctx.storage);
  const a = kind.make("k-0000000000000001");
  const keyA = kind.key(a);

  it("resolves null for an unknown key", async () => {
    expect(await store().get("k-unknown")).toBeNull();
  });

  it("returns an inserted record unchanged", async () => {
    expect(await store().insert(a)).toBe(true);
    expect(await store().get(keyA)).toStrictEqual(a);
  });

  it("refuses an insert whose key is taken and keeps the first record", async () => {
    await store().insert(a);
    expect(await store().insert(kind.change(a))).toBe(false);
    expect(await store().get(keyA)).toStrictEqual(a);
  });

  it("lets exactly one of 20 racing inserts of the same key win", async () => {
    const candidates = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : kind.change(a)));
    const results = await race(20, (i) => store().insert(candidates[i]!));
    expect(wins(results)).toBe(1);
    expect(await store().get(keyA)).toStrictEqual(candidates[results.indexOf(true)]);
  });

  it("replaces the record with the same key", async () => {
    await store().insert(a);
    expect(await store().replace(kind.change(a))).toBe(true);
    expect(await store().get(keyA)).toStrictEqual(kind.change(a));
  });

  it("refuses to replace a record that does not exist, and does not create it", async () => {
    expect(await store().replace(a)).toBe(false);
    expect(await store().get(keyA)).toBeNull();
  });

  it("deletes once: true, then false, and the record is gone", async () => {
    await store().insert(a);
    expect(await store().delete(keyA)).toBe(true);
    expect(await store().get(keyA)).toBeNull();
    expect(await store().delete(keyA)).toBe(false);
  });

  it("lets exactly one of 10 racing deletes report true", async () => {
    await store().insert(a);
    expect(wins(await race(10, () => store().delete(keyA)))).toBe(1);
  });

  it("accepts the key again after a delete", async () => {
    await store().insert(a);
    await store().delete(keyA);
    expect(await store().insert(kind.change(a))).toBe(true);
    expect(await store().get(keyA)).toStrictEqual(kind.change(a));
  });

  it("keeps no reference to a record it was given or returned", async () => {
    const input = structuredClone(a);
    await store().insert(input);
    scribble(input);
    const read = await store().get(keyA);
    expect(read).toStrictEqual(a);
    scribble(read!);
    expect(await store().get(keyA)).toStrictEqual(a);
  });

  it("keeps inserts, replaces and deletes through a reopen", async () => {
    const b = kind.make("k-0000000000000002");
    const c = kind.make("k-0000000000000003");
    await store().insert(a);
    await store().insert(b);
    await store().insert(c);
    await store().replace(kind.change(b));
    await store().delete(kind.key(c));
    await ctx.reopen();
    expect(await store().get(keyA)).toStrictEqual(a);
    expect(await store().get(kind.key(b))).toStrictEqual(kind.change(b));
    expect(await store().get(kind.key(c))).toBeNull();
  });
}

/** Overwrites every string and empties every array of a record, in place. */
function scribble(record: object): void {
  for (const [field, value] of Object.entries(record)) {
    if (typeof value === "string") Reflect.set(record, field, `${value}-changed`);
    if (Array.isArray(value)) value.splice(0, value.length, "changed");
  }
}

interface OrgKind<T extends { id: string; organization: string }> extends Kind<T> {
  store(storage: Storage): KeyedStore<T> & { listByOrganization(organization: string): Promise<T[]> };
  make(key: string, organization?: string): T;
}

function describeDirectoryStore<T extends { id: string; organization: string }>(
  ctx: ConformanceContext,
  kind: OrgKind<T>,
  extraCases?: () => void,
): void {
  describe(kind.name, () => {
    describeKeyedStore(ctx, kind);
    const store = () => kind.store(ctx.storage);

    it("lists the records of one organization ordered by id", async () => {
      // Mixed case: ordering is by code unit ("B" < "a"), not by a locale collation.
      const ids = ["x-b2", "x-B1", "x-a3", "x-A9", "x-a10", "x-_0"];
      const records = ids.map((id) => kind.make(id, ORG));
      for (const record of records) await store().insert(record);
      await store().insert(kind.make("x-other", "other-org"));
      expect(await store().listByOrganization(ORG)).toStrictEqual(byId(records));
    });

    it("lists nothing for an organization without records", async () => {
      await store().insert(kind.make("x-1", ORG));
      expect(await store().listByOrganization("nobody")).toStrictEqual([]);
    });

    it("lists a replaced record under its new organization only", async () => {
      const record = kind.make("x-1", ORG);
      await store().insert(record);
      await store().replace({ ...record, organization: "other-org" });
      expect(await store().listByOrganization(ORG)).toStrictEqual([]);
      expect(await store().listByOrganization("other-org")).toStrictEqual([{ ...record, organization: "other-org" }]);
    });

    it("stops listing a deleted record", async () => {
      await store().insert(kind.make("x-1", ORG));
      await store().insert(kind.make("x-2", ORG));
      await store().delete("x-1");
      expect((await store().listByOrganization(ORG)).map((r) => r.id)).toStrictEqual(["x-2"]);
    });

    extraCases?.();
  });
}

function describeTeamMembership(ctx: ConformanceContext): void {
  const teams = () => ctx.storage.teams;

  it("lists the teams of an organization that contain a user, ordered by id", async () => {
    await teams().insert(fx.team("team-c", ORG, ["user-1"]));
    await teams().insert(fx.team("team-A", ORG, ["user-2", "user-1"]));
    await teams().insert(fx.team("team-b", ORG, ["user-2"]));
    await teams().insert(fx.team("team-a", ORG, ["user-3", "user-1", "user-4"]));
    await teams().insert(fx.team("team-x", "other-org", ["user-1"]));
    const listed = await teams().listByMember(ORG, "user-1");
    expect(listed.map((t) => t.id)).toStrictEqual(["team-A", "team-a", "team-c"]);
    expect(listed[0]).toStrictEqual(fx.team("team-A", ORG, ["user-2", "user-1"]));
  });

  it("lists nothing for a user in no team, or a member id that only matches in part", async () => {
    await teams().insert(fx.team("team-a", ORG, ["user-10", "user-1x"]));
    expect(await teams().listByMember(ORG, "user-1")).toStrictEqual([]);
    expect(await teams().listByMember(ORG, "nobody")).toStrictEqual([]);
  });

  it("keeps the member list as given, order and repeats included", async () => {
    const record = fx.team("team-a", ORG, ["user-3", "user-1", "user-3"]);
    await teams().insert(record);
    expect(await teams().get("team-a")).toStrictEqual(record);
    expect(await teams().listByMember(ORG, "user-3")).toStrictEqual([record]);
  });

  it("follows membership changes made by replace and delete", async () => {
    await teams().insert(fx.team("team-a", ORG, ["user-1"]));
    await teams().insert(fx.team("team-b", ORG, ["user-1"]));
    await teams().replace(fx.team("team-a", ORG, ["user-2"]));
    await teams().delete("team-b");
    expect(await teams().listByMember(ORG, "user-1")).toStrictEqual([]);
    expect((await teams().listByMember(ORG, "user-2")).map((t) => t.id)).toStrictEqual(["team-a"]);
  });

  it("does not let a refused insert touch the membership of the existing team", async () => {
    await teams().insert(fx.team("team-a", ORG, ["user-1"]));
    expect(await teams().insert(fx.team("team-a", ORG, ["user-2"]))).toBe(false);
    expect(await teams().listByMember(ORG, "user-2")).toStrictEqual([]);
    expect((await teams().listByMember(ORG, "user-1")).map((t) => t.id)).toStrictEqual(["team-a"]);
  });

  // decision D41: one team name per organization; owners is the team's own property.
  it("refuses a second team of one name in an organization (insert resolves false, replace rejects), not in another organization", async () => {
    await teams().insert({ ...fx.team("team-a", ORG, ["user-1"]), name: "owners", owners: true });
    expect(await teams().insert({ ...fx.team("team-b", ORG, ["user-2"]), name: "owners" })).toBe(false);
    expect(await teams().get("team-b")).toBeNull();
    expect(await teams().listByMember(ORG, "user-2")).toStrictEqual([]);
    expect(await teams().insert({ ...fx.team("team-c", "other-org"), name: "owners" })).toBe(true);
    await teams().insert(fx.team("team-d", ORG));
    await expect(teams().replace({ ...fx.team("team-d", ORG), name: "owners" })).rejects.toThrow();
    expect((await teams().get("team-d"))?.name).toBe("team team-d");
    expect(await teams().get("team-a")).toStrictEqual({ ...fx.team("team-a", ORG, ["user-1"]), name: "owners", owners: true });
    expect((await teams().get("team-c"))?.owners).toBe(false);
  });

  it("keeps membership through a reopen", async () => {
    await teams().insert(fx.team("team-a", ORG, ["user-1"]));
    await teams().insert(fx.team("team-b", ORG, ["user-1"]));
    await teams().replace(fx.team("team-b", ORG, ["user-2"]));
    await ctx.reopen();
    expect((await teams().listByMember(ORG, "user-1")).map((t) => t.id)).toStrictEqual(["team-a"]);
    expect((await teams().listByMember(ORG, "user-2")).map((t) => t.id)).toStrictEqual(["team-b"]);
  });
}

export function describeDirectoryCases(ctx: ConformanceContext): void {
  describe("organizations", () => {
    describeKeyedStore(ctx, {
      name: "organizations",
      store: (s) => s.organizations,
      key: (r) => r.name,
      make: (name) => fx.organization(name),
      change: (r) => ({ ...r, email: null }),
    });
  });

  describe("users", () => {
    describeKeyedStore(ctx, {
      name: "users",
      store: (s) => s.users,
      key: (r) => r.id,
      make: (id) => fx.user(id),
      change: (r) => ({ ...r, username: `${r.username}-renamed`, email: null }),
    });
  });

  describeDirectoryStore(ctx, {
    name: "projects",
    store: (s) => s.projects,
    key: (r) => r.id,
    make: (id, org = ORG) => fx.project(id, org),
    change: (r) => ({ ...r, name: `${r.name} renamed` }),
  });
  describeDirectoryStore(ctx, {
    name: "workspaces",
    store: (s) => s.workspaces,
    key: (r) => r.id,
    make: (id, org = ORG) => fx.workspace(id, org),
    change: (r) => ({
      ...r,
      name: `${r.name}-renamed`,
      projectId: "prj-0000000000000002",
      workingDirectory: "",
      vcsRepoUrl: null,
      vcsBranch: null,
    }),
  });
  describeDirectoryStore(
    ctx,
    {
      name: "teams",
      store: (s) => s.teams,
      key: (r) => r.id,
      make: (id, org = ORG) => fx.team(id, org),
      change: (r) => ({ ...r, name: `${r.name} renamed`, visibility: "secret" as const, orgPermissions: [], members: ["user-9"] }),
    },
    () => describeTeamMembership(ctx),
  );
  describeDirectoryStore(ctx, {
    name: "policy sets",
    store: (s) => s.policySets,
    key: (r) => r.id,
    make: (id, org = ORG) => fx.policySet(id, org),
    change: (r) => ({ ...r, name: `${r.name} renamed`, kind: "sentinel" as const }),
  });
  describeDirectoryStore(ctx, {
    name: "agent pools",
    store: (s) => s.agentPools,
    key: (r) => r.id,
    make: (id, org = ORG) => fx.agentPool(id, org),
    change: (r) => ({ ...r, name: `${r.name} renamed` }),
  });
}
