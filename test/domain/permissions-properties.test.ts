import { describe, it, expect } from "vitest";
import fc from "fast-check";
import {
  ACTIONS,
  can,
  canInOrganization,
  canReadGrant,
  customPermissions,
  impliedPermissions,
  organizationPermissions,
  resolveProjectAccess,
  type AccessReason,
  type EffectiveAccess,
  type ResolveProjectAccessInput,
} from "../../src/domain/permissions.js";
import { ORG_PERMISSIONS, type OrgPermission, type Principal } from "../../src/schemas/common.js";
import type { Project, Team } from "../../src/schemas/directory.js";
import type { AccessLevel, PermissionSet, TeamProjectRecord } from "../../src/schemas/team-projects.js";
import { ORDERS } from "./permission-orders.js";

// Hand-written keys and orders (./permission-orders.ts), so the properties do not borrow the resolver's own.
const PROJECT_KEYS = new Set(["settings", "teams", "variableSets"]);

const PROJECT: Project = { id: "prj-1", name: "core", organization: "acme" };
const STAMP = "2024-01-01T00:00:00.000Z";

const grant = (
  id: string,
  teamId: string,
  access: AccessLevel,
  set: PermissionSet = impliedPermissions(access),
): TeamProjectRecord => ({
  id, teamId, projectId: "prj-1", organization: "acme", access, ...set, createdAt: STAMP, updatedAt: STAMP,
});
const team = (id: string, orgPermissions: OrgPermission[] = [], organization = "acme"): Team =>
  ({ id, name: id, organization, visibility: "secret", orgPermissions, members: [], owners: false });
const member = (teamIds: string[], extra: Partial<Principal> = {}): Principal =>
  ({ organization: "acme", kind: "user", teamIds, isOwner: false, orgPermissions: [], ...extra });

const resolve = (principal: Principal, teams: Team[], grants: TeamProjectRecord[] = []) =>
  resolveProjectAccess({ principal, teams, grants, project: PROJECT });

// ---- generators ----

const customSetArb = fc
  .record({
    settings: fc.constantFrom("read", "update", "delete"),
    teams: fc.constantFrom("none", "read", "manage"),
    variableSets: fc.constantFrom("none", "read", "write"),
    runs: fc.constantFrom("read", "plan", "apply"),
    sentinelMocks: fc.constantFrom("none", "read"),
    stateVersions: fc.constantFrom("none", "read-outputs", "read", "write"),
    variables: fc.constantFrom("none", "read", "write"),
    create: fc.boolean(), locking: fc.boolean(), delete: fc.boolean(), move: fc.boolean(),
    runTasks: fc.boolean(), policyOverrides: fc.boolean(),
  })
  .map(({ settings, teams, variableSets, ...workspaceAccess }) =>
    customPermissions({ projectAccess: { settings, teams, variableSets }, workspaceAccess }));

const grantSpecArb = fc.oneof(
  fc.constantFrom<AccessLevel>("read", "write", "maintain", "admin").map((access) => ({ access, set: impliedPermissions(access) })),
  customSetArb.map((set) => ({ access: "custom" as AccessLevel, set })),
);

// Organization permissions are rare, so most runs exercise the grants themselves.
const orgPermsArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant<OrgPermission[]>([]) },
  { weight: 1, arbitrary: fc.subarray([...ORG_PERMISSIONS], { maxLength: 2 }) },
);

const teamSpecArb = fc.record({
  orgPermissions: orgPermsArb,
  grant: fc.option(grantSpecArb, { freq: 4 }),
  /** Some grants are on another project and must not count. */
  otherProject: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
});

const worldArb = fc.record({
  teams: fc.array(teamSpecArb, { minLength: 1, maxLength: 6 }),
  principalOrgPermissions: orgPermsArb,
  isOwner: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
});
type World = typeof worldArb extends fc.Arbitrary<infer W> ? W : never;

function inputFor(world: World, only?: number): ResolveProjectAccessInput {
  const teams = world.teams.map((t, i) => team(`team-${i}`, t.orgPermissions));
  const grants = world.teams.flatMap((t, i) =>
    t.grant
      ? [{ ...grant(`tprj-${i}`, `team-${i}`, t.grant.access, t.grant.set), projectId: t.otherProject ? "prj-2" : "prj-1" }]
      : []);
  const chosen = only === undefined ? teams : [teams[only]!];
  const principal = member(chosen.map((t) => t.id), { isOwner: world.isOwner, orgPermissions: world.principalOrgPermissions });
  return { principal, teams: chosen, grants, project: PROJECT };
}

// ---- reference folds ----

const reasonKey = (r: AccessReason) => JSON.stringify(r);
type Flat = Map<string, { value: unknown; reasons: Set<string> }>;

function flat(e: EffectiveAccess): Flat | null {
  if (!e.hasAccess) return null;
  const out: Flat = new Map();
  for (const key of Object.keys(ORDERS)) {
    const cell = PROJECT_KEYS.has(key)
      ? e.projectAccess[key as keyof typeof e.projectAccess]
      : e.workspaceAccess[key as keyof typeof e.workspaceAccess];
    out.set(key, { value: cell.value, reasons: new Set(cell.reasons.map(reasonKey)) });
  }
  return out;
}

function pointwiseMax(results: (Flat | null)[]): Flat | null {
  const present = results.filter((r): r is Flat => r !== null);
  if (present.length === 0) return null;
  const out: Flat = new Map();
  for (const [key, order] of Object.entries(ORDERS)) {
    const cells = present.map((r) => r.get(key)!);
    const best = Math.max(...cells.map((c) => order.indexOf(c.value)));
    const reasons = new Set(cells.filter((c) => order.indexOf(c.value) === best).flatMap((c) => [...c.reasons]));
    out.set(key, { value: order[best], reasons });
  }
  return out;
}

describe("permission resolver properties over one to six teams", () => {
  it("is additive: the whole is the pointwise maximum of each team alone, reasons included", () => {
    fc.assert(
      fc.property(worldArb, (world) => {
        const whole = flat(resolveProjectAccess(inputFor(world)));
        const parts = world.teams.map((_, i) => flat(resolveProjectAccess(inputFor(world, i))));
        expect(whole).toEqual(pointwiseMax(parts));
      }),
      { numRuns: 300 },
    );
  });

  it("is monotonic: adding a grant never removes a permission or an allowed action", () => {
    fc.assert(
      fc.property(worldArb, grantSpecArb, fc.nat(), (world, extra, pick) => {
        const before = inputFor(world);
        const teamId = before.principal.teamIds[pick % before.principal.teamIds.length]!;
        const after = { ...before, grants: [...before.grants, grant("tprj-extra", teamId, extra.access, extra.set)] };
        const [b, a] = [resolveProjectAccess(before), resolveProjectAccess(after)];
        for (const action of ACTIONS) {
          if (can(b, action).allowed) expect(can(a, action).allowed).toBe(true);
        }
        const [fb, fa] = [flat(b), flat(a)];
        expect(fa).not.toBeNull();
        for (const [key, order] of Object.entries(ORDERS)) {
          if (fb) expect(order.indexOf(fa!.get(key)!.value)).toBeGreaterThanOrEqual(order.indexOf(fb.get(key)!.value));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("permission resolver examples", () => {
  it("gives admin to a team with manage-projects even when its grant says read (decision D19)", () => {
    const e = resolve(member(["team-a"]), [team("team-a", ["manage-projects"])], [grant("tprj-a", "team-a", "read")]);
    expect(e.hasAccess && e.projectAccess.settings.value).toBe("delete");
    expect(e.hasAccess && e.projectAccess.teams.reasons).toEqual([
      { kind: "org-permission", permission: "manage-projects", teamId: "team-a" },
    ]);
    expect(can(e, "team-access:manage").allowed).toBe(true);
  });

  it("names the grant that gives each permission", () => {
    const grants = [grant("tprj-r", "team-r", "read"), grant("tprj-w", "team-w", "write")];
    const e = resolve(member(["team-r", "team-w"]), [team("team-r"), team("team-w")], grants);
    expect(can(e, "variables:write")).toEqual({
      allowed: true,
      reasons: [{ kind: "grant", grantId: "tprj-w", teamId: "team-w", access: "write" }],
    });
    const settingsGrants = e.hasAccess && e.projectAccess.settings.reasons.map((r) => r.kind === "grant" && r.grantId);
    expect(settingsGrants).toEqual(["tprj-r", "tprj-w"]);
  });

  it("explains a denial with the permission needed and where the current value comes from", () => {
    const e = resolve(member(["team-r"]), [team("team-r")], [grant("tprj-r", "team-r", "read")]);
    const decision = can(e, "variables:write");
    expect(decision.allowed).toBe(false);
    expect(!decision.allowed && decision.reason).toMatch(/workspace-access\.variables write.*effective .* is read.*tprj-r/);
  });

  it("denies every action to an organization member without a grant", () => {
    const e = resolve(member(["team-a"]), [team("team-a")]);
    expect(e.hasAccess).toBe(false);
    for (const action of ACTIONS) expect(can(e, action).allowed).toBe(false);
  });

  it("denies an override to manage-policy-overrides without any access to the project", () => {
    const e = resolve(member([], { orgPermissions: ["manage-policy-overrides"] }), []);
    expect(can(e, "runs:override").allowed).toBe(false);
  });

  it("gives manage-workspaces the workspaces but not the project's team access", () => {
    const e = resolve(member(["team-a"]), [team("team-a", ["manage-workspaces"])]);
    expect(can(e, "variables:write").allowed).toBe(true);
    expect(can(e, "run-tasks:manage").allowed).toBe(true);
    expect(can(e, "team-access:manage").allowed).toBe(false);
    expect(e.hasAccess && e.projectAccess.settings.value).toBe("read");
  });

  it("gives an owner nothing in another organization's project", () => {
    const e = resolve(member([], { isOwner: true, organization: "other" }), []);
    expect(can(e, "project:read").allowed).toBe(false);
  });

  it("merges the principal's own organization permissions with its teams', once each, in table order", () => {
    const teams = [team("team-a", ["manage-workspaces", "manage-policies"]), team("team-b", ["manage-policies", "manage-agent-pools"])];
    const principal = member(["team-a", "team-b"], { orgPermissions: ["manage-agent-pools", "manage-projects"] });
    expect(organizationPermissions(principal, teams)).toEqual(
      ORG_PERMISSIONS.filter((p) => ["manage-workspaces", "manage-policies", "manage-agent-pools", "manage-projects"].includes(p)),
    );
    expect(organizationPermissions(member(["team-a"]), teams)).toEqual(ORG_PERMISSIONS.filter((p) => p === "manage-workspaces" || p === "manage-policies"));
    expect(organizationPermissions(member([], { orgPermissions: ["manage-projects"] }), teams)).toEqual(["manage-projects"]);
  });

  it("ignores organization permissions of teams the principal is not on or that belong elsewhere", () => {
    const teams = [team("team-x", ["manage-projects"]), team("team-a", ["manage-projects"], "other")];
    expect(organizationPermissions(member(["team-a"]), teams)).toEqual([]);
    expect(resolve(member(["team-a"]), teams).hasAccess).toBe(false);
  });

  it("ignores grants of teams the principal is not on and grants on other projects", () => {
    const grants = [grant("tprj-x", "team-x", "admin"), { ...grant("tprj-a", "team-a", "admin"), projectId: "prj-2" }];
    const e = resolve(member(["team-a"]), [team("team-a"), team("team-x")], grants);
    expect(e.hasAccess).toBe(false);
  });

  it("reads a fixed level from the table, not from stale stored values", () => {
    const stale = grant("tprj-a", "team-a", "read", customPermissions({ workspaceAccess: { variables: "write" } }));
    const e = resolve(member(["team-a"]), [team("team-a")], [stale]);
    expect(can(e, "variables:read").allowed).toBe(true);
    expect(can(e, "variables:write").allowed).toBe(false);
  });

  it("lets an organization token act as an owner", () => {
    const e = resolve(member([], { kind: "organization" }), []);
    for (const action of ACTIONS) expect(can(e, action).allowed).toBe(true);
  });
});

describe("team access visibility", () => {
  const own = grant("tprj-own", "team-a", "read");
  const other = grant("tprj-other", "team-secret", "write");

  it("shows a member the grants of their own teams only", () => {
    const principal = member(["team-a"]);
    const e = resolve(principal, [team("team-a")], [own, other]);
    expect(canReadGrant(e, principal, own).allowed).toBe(true);
    expect(canReadGrant(e, principal, other).allowed).toBe(false);
  });

  it("shows every grant to a principal who manages the project's team access", () => {
    const principal = member(["team-a"]);
    const e = resolve(principal, [team("team-a")], [grant("tprj-own", "team-a", "admin"), other]);
    expect(canReadGrant(e, principal, other).allowed).toBe(true);
  });

  it("never shows a grant of another project through this project's access", () => {
    const principal = member([], { isOwner: true });
    const e = resolve(principal, []);
    expect(canReadGrant(e, principal, { ...other, projectId: "prj-2" }).allowed).toBe(false);
  });
});

describe("organization-scoped decisions", () => {
  const scope = (principal: Principal, teams: Team[] = []) => ({ principal, teams, organization: "acme" });

  it("let owners manage policy set parameters, agent tokens and run tasks", () => {
    for (const action of ["policy-set-parameters:write", "agent-tokens:manage", "run-tasks:configure"] as const) {
      expect(canInOrganization(scope(member([], { isOwner: true })), action).allowed).toBe(true);
    }
  });

  it("let a team's manage-policies write policy set parameters and say which team gave it", () => {
    const teams = [team("team-p", ["manage-policies"])];
    expect(canInOrganization(scope(member(["team-p"]), teams), "policy-set-parameters:write")).toEqual({
      allowed: true,
      reasons: [{ kind: "org-permission", permission: "manage-policies", teamId: "team-p" }],
    });
  });

  it("require manage-agent-pools for agent tokens", () => {
    expect(canInOrganization(scope(member([], { orgPermissions: ["manage-policies"] })), "agent-tokens:manage")).toEqual({
      allowed: false, reason: "agent-tokens:manage needs an organization owner or the organization permission manage-agent-pools",
    });
    const poolManager = member([], { orgPermissions: ["manage-agent-pools"] });
    expect(canInOrganization(scope(poolManager), "agent-tokens:manage").allowed).toBe(true);
  });

  it("deny everything in another organization, owners included", () => {
    const decision = canInOrganization({ ...scope(member([], { isOwner: true })), organization: "other" }, "run-tasks:configure");
    expect(decision.allowed).toBe(false);
  });
});
