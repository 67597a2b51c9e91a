import { describe, expect, it } from "vitest";
import { DIRECTORY_SCOPE, variablesScope } from "../../storage/revisions.js";
import type { RevisionStore } from "../../storage/types.js";
import type { ConformanceContext } from "./context.js";
import { agentPool, apiToken, at, organization, policySet, project, PS_SAME_ID, sensitiveVariable, team, user, variable, workspace, WS } from "./fixtures.js";
import { teamProject } from "./team-projects.cases.js";

function revisionHelpers(ctx: ConformanceContext) {
  const revisions = (): RevisionStore => {
    const store = ctx.storage.revisions;
    if (!store) throw new Error("this adapter keeps no revisions");
    return store;
  };
  const directory = async (): Promise<number> => (await revisions().read([DIRECTORY_SCOPE]))[0]!;
  const vars = async (): Promise<number> => (await revisions().read([variablesScope(WS)]))[0]!;

  /** Runs `write` and expects `counter` to have grown. */
  const bumps = async (counter: () => Promise<number>, label: string, write: () => Promise<unknown>): Promise<void> => {
    const before = await counter();
    await write();
    expect(await counter(), label).toBeGreaterThan(before);
  };
  return { revisions, directory, vars, bumps };
}

type RevisionHelpers = ReturnType<typeof revisionHelpers>;

/** Reading: 0 for a scope never written, one counter per scope asked, in order. */
function revisionReadCases(ctx: ConformanceContext, h: RevisionHelpers): void {
  const { revisions } = h;

  it("reads 0 for a scope never written, one counter per scope in order", async () => {
    expect(await revisions().read([])).toStrictEqual([]);
    expect(await revisions().read(["vars:workspace:ws-none", DIRECTORY_SCOPE])).toStrictEqual([0, 0]);
    await ctx.storage.organizations.insert(organization("acme"));
    const [none, dir, again] = await revisions().read(["vars:workspace:ws-none", DIRECTORY_SCOPE, "vars:workspace:ws-none"]);
    expect([none, again]).toStrictEqual([0, 0]);
    expect(dir).toBeGreaterThan(0);
  });
}

/** Every directory writer bumps the directory: entities, API tokens and team access. */
function directoryBumpCases(ctx: ConformanceContext, h: RevisionHelpers): void {
  const { directory, bumps } = h;

  it("bumps the directory on every write to organizations, projects, workspaces, teams, users, policy sets and agent pools", async () => {
    const s = ctx.storage;
    const org = organization("acme");
    await bumps(directory, "organizations.insert", () => s.organizations.insert(org));
    await bumps(directory, "organizations.replace", () => s.organizations.replace({ ...org, email: "ops@acme.test" }));
    const steps: [string, () => Promise<unknown>][] = [
      ["projects.insert", () => s.projects.insert(project("prj-1", "acme"))],
      ["projects.replace", () => s.projects.replace({ ...project("prj-1", "acme"), name: "renamed" })],
      ["workspaces.insert", () => s.workspaces.insert(workspace("ws-1", "acme"))],
      ["workspaces.replace", () => s.workspaces.replace({ ...workspace("ws-1", "acme"), name: "renamed" })],
      ["teams.insert", () => s.teams.insert(team("team-1", "acme", ["user-1"]))],
      ["teams.replace (members)", () => s.teams.replace(team("team-1", "acme", ["user-1", "user-2"]))],
      ["users.insert", () => s.users.insert(user("user-1"))],
      ["users.replace", () => s.users.replace({ ...user("user-1"), email: "new@acme.test" })],
      ["policySets.insert", () => s.policySets.insert(policySet("pol-1", "acme"))],
      ["agentPools.insert", () => s.agentPools.insert(agentPool("apool-1", "acme"))],
      ["agentPools.delete", () => s.agentPools.delete("apool-1")],
      ["policySets.delete", () => s.policySets.delete("pol-1")],
      ["users.delete", () => s.users.delete("user-1")],
      ["teams.delete", () => s.teams.delete("team-1")],
      ["workspaces.delete", () => s.workspaces.delete("ws-1")],
      ["projects.delete", () => s.projects.delete("prj-1")],
      ["organizations.delete", () => s.organizations.delete("acme")],
    ];
    for (const [label, write] of steps) await bumps(directory, label, write);
  });

  it("bumps the directory when an API token is created or deleted, and when team access changes", async () => {
    const s = ctx.storage;
    const token = apiToken();
    await bumps(directory, "apiTokens.insert", () => s.apiTokens.insert(token));
    await bumps(directory, "apiTokens.delete", () => s.apiTokens.delete(token.id));
    const grant = teamProject();
    await bumps(directory, "teamProjects.insert", () => s.teamProjects.insert(grant));
    await bumps(directory, "teamProjects.update", () => s.teamProjects.update({ ...grant, access: "read", updatedAt: at(5) }, grant.updatedAt));
    await bumps(directory, "teamProjects.delete", () => s.teamProjects.delete(grant.id));
    await s.teamProjects.insert(grant);
    await bumps(directory, "teamProjects.deleteByTeam", () => s.teamProjects.deleteByTeam(grant.teamId));
    await s.teamProjects.insert(grant);
    await bumps(directory, "teamProjects.deleteByProject", () => s.teamProjects.deleteByProject(grant.projectId));
  });
}

/** Every variable writer bumps its owner's variables scope, and owners keep apart. */
function variablesBumpCases(ctx: ConformanceContext, h: RevisionHelpers): void {
  const { revisions, vars, bumps } = h;

  it("bumps an owner's variables scope on every variable write, including re-encryption", async () => {
    const s = ctx.storage;
    const v = variable();
    await bumps(vars, "variables.insert", () => s.variables.insert(v));
    await bumps(vars, "variables.update", () => s.variables.update({ ...v, value: "us-east-1", versionId: "v2" }, v.versionId));
    await bumps(vars, "variables.delete", () => s.variables.delete(WS, v.id));
    const secret = sensitiveVariable({ id: "var-0000000000000002" });
    await s.variables.insert(secret);
    await bumps(vars, "sealedValues.replace", () => s.sealedValues.replace("vars.value", secret.id, secret.value, "rp1:k2:bm9uY2U:b3RoZXI"));
    await bumps(vars, "variables.deleteByOwner", () => s.variables.deleteByOwner(WS));
  });

  it("keeps owners apart: a policy set sharing a workspace's id has its own scope", async () => {
    await ctx.storage.variables.insert(variable({}, PS_SAME_ID));
    const [ps] = await revisions().read([variablesScope(PS_SAME_ID)]);
    expect(ps).toBeGreaterThan(0);
    expect(variablesScope(PS_SAME_ID)).not.toBe(variablesScope(WS));
  });
}

/** Counters stand still on reads and never go back through a reopen. */
function revisionStabilityCases(ctx: ConformanceContext, h: RevisionHelpers): void {
  const { revisions } = h;

  it("stands still on reads", async () => {
    const s = ctx.storage;
    await s.organizations.insert(organization("acme"));
    await s.variables.insert(variable());
    const before = await revisions().read([DIRECTORY_SCOPE, variablesScope(WS)]);
    await s.organizations.get("acme");
    await s.variables.list(WS);
    await s.variables.list(WS, { offset: 0, limit: 10 });
    await s.variables.get(WS, variable().id);
    await s.apiTokens.findByDigest("0".repeat(64));
    await s.teamProjects.listForTeams("prj-1", ["team-1"]);
    expect(await revisions().read([DIRECTORY_SCOPE, variablesScope(WS)])).toStrictEqual(before);
  });

  it("never goes back: counters survive a reopen", async () => {
    await ctx.storage.organizations.insert(organization("acme"));
    await ctx.storage.variables.insert(variable());
    const before = await revisions().read([DIRECTORY_SCOPE, variablesScope(WS)]);
    await ctx.reopen();
    const after = await revisions().read([DIRECTORY_SCOPE, variablesScope(WS)]);
    // A store with nothing to reopen keeps its state; a file reads back what it wrote.
    expect(after).toStrictEqual(before);
  });
}

/**
 * `Storage.revisions` (src/storage/revisions.ts): the core serves cached reads only while these
 * counters stand still, so a write that forgets to bump its scope is a stale (and, for the
 * directory, an unauthorized) read. Every writer of every scope is listed here.
 */
export function describeRevisionCases(ctx: ConformanceContext): void {
  const h = revisionHelpers(ctx);

  describe("revisions", () => {
    revisionReadCases(ctx, h);
    directoryBumpCases(ctx, h);
    variablesBumpCases(ctx, h);
    revisionStabilityCases(ctx, h);
  });
}
