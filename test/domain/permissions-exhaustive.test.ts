import { describe, it, expect } from "vitest";
import { ACTIONS, can, resolveProjectAccess, toPermissionSet } from "../../src/domain/permissions.js";
import type { OrgPermission, Principal } from "../../src/schemas/common.js";
import type { Project, Team } from "../../src/schemas/directory.js";
import type { TeamProjectRecord } from "../../src/schemas/team-projects.js";
import { ORDERS } from "./permission-orders.js";

// An independent model of spec 4.6 and decisions D19-D21, written without the resolver's code:
// every value below (and ORDERS in ./permission-orders.ts) is typed out by hand.
const PROJECT_KEYS = ["settings", "teams", "variableSets"];
type Flat = Record<string, unknown>;

const LEVELS: Record<string, Flat> = {
  read: { settings: "read", teams: "none", variableSets: "none", runs: "read", sentinelMocks: "none", stateVersions: "read", variables: "read", create: false, locking: false, delete: false, move: false, runTasks: false, policyOverrides: false },
  write: { settings: "read", teams: "none", variableSets: "none", runs: "apply", sentinelMocks: "read", stateVersions: "write", variables: "write", create: false, locking: true, delete: false, move: false, runTasks: false, policyOverrides: false },
  maintain: { settings: "read", teams: "none", variableSets: "none", runs: "apply", sentinelMocks: "read", stateVersions: "write", variables: "write", create: true, locking: true, delete: true, move: false, runTasks: true, policyOverrides: false },
  admin: { settings: "delete", teams: "manage", variableSets: "write", runs: "apply", sentinelMocks: "read", stateVersions: "write", variables: "write", create: true, locking: true, delete: true, move: true, runTasks: true, policyOverrides: true },
};

const ORG_VARIANTS = ["none", "manage-projects", "manage-workspaces", "manage-policy-overrides", "manage-run-tasks"] as const;
type OrgVariant = (typeof ORG_VARIANTS)[number];
const WHO = ["member", "owner", "organization-token"] as const;
type Who = (typeof WHO)[number];

interface Scenario {
  who: Who;
  org: OrgVariant;
  /** Put the organization permission on the team instead of on the principal. */
  orgOnTeam: boolean;
  /** The grant's flat permissions and level, or null for "no grant on this project". */
  grant: { access: string; flat: Flat } | null;
}

function referenceDecisions(s: Scenario): Record<string, boolean> {
  const admin = s.who !== "member" || s.org === "manage-projects";
  const wsAdmin = admin || s.org === "manage-workspaces";
  const g = s.grant?.flat;
  const access = wsAdmin || g !== undefined;
  return {
    "project:read": access,
    "variables:read": wsAdmin || (g !== undefined && g.variables !== "none"),
    "variables:write": wsAdmin || g?.variables === "write",
    "runs:read": access,
    "runs:override": access && (wsAdmin || g?.policyOverrides === true || s.org === "manage-policy-overrides"),
    "team-access:read-all": admin || g?.teams === "manage",
    "team-access:manage": admin || g?.teams === "manage",
    "run-tasks:manage": access && (wsAdmin || g?.runTasks === true || s.org === "manage-run-tasks"),
  };
}

function referenceValues(s: Scenario): Flat | null {
  const candidates: Flat[] = [];
  if (s.grant) candidates.push(s.grant.flat);
  if (s.who !== "member" || s.org === "manage-projects") candidates.push(LEVELS.admin!);
  if (s.org === "manage-workspaces") {
    candidates.push({ ...LEVELS.admin, settings: "read", teams: "none", variableSets: "none" });
  }
  if (candidates.length === 0) return null;
  const out: Flat = {};
  for (const [key, order] of Object.entries(ORDERS)) {
    out[key] = candidates.map((c) => c[key]).reduce((a, b) => (order.indexOf(b) > order.indexOf(a) ? b : a));
  }
  return out;
}

const PROJECT: Project = { id: "prj-1", name: "core", organization: "acme" };

function build(s: Scenario) {
  const orgPermissions: OrgPermission[] = s.org === "none" ? [] : [s.org];
  const team: Team = {
    id: "team-1", name: "devs", organization: "acme", visibility: "secret", members: [], owners: false,
    orgPermissions: s.orgOnTeam ? orgPermissions : [],
  };
  const principal: Principal = {
    organization: "acme",
    kind: s.who === "organization-token" ? "organization" : "user",
    teamIds: ["team-1"],
    isOwner: s.who === "owner",
    orgPermissions: s.orgOnTeam ? [] : orgPermissions,
  };
  return { principal, teams: [team], grants: s.grant ? [grantRecord(s.grant)] : STRANGERS_GRANTS, project: PROJECT };
}

// Memoized per grant: the sweeps reuse one grant for several principals.
const records = new WeakMap<object, TeamProjectRecord>();
function grantRecord(grant: NonNullable<Scenario["grant"]>): TeamProjectRecord {
  const cached = records.get(grant);
  if (cached) return cached;
  const f = grant.flat;
  const record: TeamProjectRecord = {
    id: "tprj-1", teamId: "team-1", projectId: "prj-1", organization: "acme",
    access: grant.access as TeamProjectRecord["access"],
    projectAccess: { settings: f.settings, teams: f.teams, variableSets: f.variableSets } as TeamProjectRecord["projectAccess"],
    workspaceAccess: Object.fromEntries(
      Object.entries(f).filter(([k]) => !PROJECT_KEYS.includes(k)),
    ) as TeamProjectRecord["workspaceAccess"],
    createdAt: "2024-01-01T00:00:00.000Z", updatedAt: "2024-01-01T00:00:00.000Z",
  };
  records.set(grant, record);
  return record;
}

// With no grant of its own the team sits next to admin grants that must not count: one of another
// team, one on another project.
const STRANGERS_GRANTS: TeamProjectRecord[] = [
  { ...adminGrant(), id: "tprj-other-team", teamId: "team-2" },
  { ...adminGrant(), id: "tprj-other-project", projectId: "prj-2" },
];
function adminGrant(): TeamProjectRecord {
  return grantRecord({ access: "admin", flat: LEVELS.admin! });
}


/** Compares resolver and reference; returns a description of the first difference, or null. */
function compare(s: Scenario): string | null {
  const effective = resolveProjectAccess(build(s));
  const expected = referenceDecisions(s);
  for (const action of ACTIONS) {
    if (can(effective, action).allowed !== expected[action]) return `${action} for ${JSON.stringify(s)}`;
  }
  const set = toPermissionSet(effective);
  const expectedValues = referenceValues(s);
  if (expectedValues === null || set === null) return set === expectedValues ? null : `access for ${JSON.stringify(s)}`;
  for (const key of Object.keys(ORDERS)) {
    const group: Flat = PROJECT_KEYS.includes(key) ? set.projectAccess : set.workspaceAccess;
    if (group[key] !== expectedValues[key]) return `${key} for ${JSON.stringify(s)}`;
  }
  return null;
}

/** Every custom grant: the product of every permission's values (variable-sets rotates, it gates no action). */
function* customGrants(): Generator<Flat> {
  let n = 0;
  for (const settings of ORDERS.settings!) for (const teams of ORDERS.teams!) for (const runs of ORDERS.runs!)
  for (const sentinelMocks of ORDERS.sentinelMocks!) for (const stateVersions of ORDERS.stateVersions!)
  for (const variables of ORDERS.variables!) for (let bits = 0; bits < 64; bits++) {
    const variableSets = ORDERS.variableSets![n++ % 3];
    const [create, locking, del, move, runTasks, policyOverrides] = [0, 1, 2, 3, 4, 5].map((i) => (bits & (1 << i)) !== 0);
    yield { settings, teams, variableSets, runs, sentinelMocks, stateVersions, variables, create, locking, delete: del, move, runTasks, policyOverrides };
  }
}

function sweep(scenarios: Iterable<Scenario>): { count: number; failures: string[] } {
  const failures: string[] = [];
  let count = 0;
  for (const s of scenarios) {
    count++;
    const failure = compare(s);
    if (failure !== null && failures.push(failure) >= 10) break;
  }
  return { count, failures };
}

describe("permission resolver against an independent reference, one team", () => {
  it("agrees for every fixed access level, organization permission and ownership", () => {
    const scenarios: Scenario[] = [];
    for (const access of Object.keys(LEVELS)) for (const org of ORG_VARIANTS) for (const who of WHO)
    for (const orgOnTeam of [false, true]) scenarios.push({ who, org, orgOnTeam, grant: { access, flat: LEVELS[access]! } });
    const { count, failures } = sweep(scenarios);
    expect(failures).toEqual([]);
    expect(count).toBe(4 * 5 * 3 * 2);
  });

  it("agrees when the team has no grant on the project, next to grants of others", () => {
    const scenarios: Scenario[] = [];
    for (const org of ORG_VARIANTS) for (const who of WHO) for (const orgOnTeam of [false, true]) {
      scenarios.push({ who, org, orgOnTeam, grant: null });
    }
    expect(sweep(scenarios).failures).toEqual([]);
  });

  for (const org of ORG_VARIANTS) {
    it(`agrees for every custom grant, with organization permission ${org}, as member, owner or organization token`, () => {
      function* scenarios(): Generator<Scenario> {
        let i = 0;
        for (const flat of customGrants()) {
          const grant = { access: "custom", flat };
          for (const who of WHO) yield { who, org, orgOnTeam: i++ % 2 === 0, grant };
        }
      }
      const { count, failures } = sweep(scenarios());
      expect(failures).toEqual([]);
      expect(count).toBe(3 * 3 * 3 * 2 * 4 * 3 * 64 * 3);
    });
  }
});
