import type { AgentPool, Organization, PolicySet, Project, Team, User, Workspace } from "../../schemas/directory.js";
import type { ApiTokenRecord, VariableRecord, VarOwner } from "../../schemas/records.js";

/** Record builders with every field set to a non-default value, so a dropped column shows. */

export const at = (second: number): string => new Date(Date.UTC(2024, 4, 1, 10, 0, second)).toISOString();

export const WS: VarOwner = { kind: "workspace", id: "ws-AAAAAAAAAAAAAAAA" };
export const WS2: VarOwner = { kind: "workspace", id: "ws-BBBBBBBBBBBBBBBB" };
/** A policy set whose id equals WS's, so only the owner kind tells them apart. */
export const PS_SAME_ID: VarOwner = { kind: "policy-set", id: WS.id };

export function variable(overrides: Partial<VariableRecord> = {}, owner: VarOwner = WS): VariableRecord {
  return {
    id: "var-0000000000000001",
    ownerKind: owner.kind,
    ownerId: owner.id,
    key: "region",
    value: "eu-central-1",
    description: "where it runs",
    category: owner.kind === "policy-set" ? "policy-set" : "env",
    hcl: false,
    sensitive: false,
    versionId: "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    createdAt: at(0),
    updatedAt: at(0),
    ...overrides,
  };
}

export function sensitiveVariable(overrides: Partial<VariableRecord> = {}, owner: VarOwner = WS): VariableRecord {
  return variable({ sensitive: true, value: "rp1:k1:bm9uY2U:Y2lwaGVydGV4dA", description: null, ...overrides }, owner);
}

export function apiToken(overrides: Partial<ApiTokenRecord> = {}): ApiTokenRecord {
  return {
    id: "at-0000000000000001",
    digest: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    organization: "acme",
    kind: "user",
    userId: "user-0000000000000001",
    teamId: null,
    description: "ci token",
    createdAt: at(0),
    lastUsedAt: null,
    ...overrides,
  };
}

export const organization = (name: string, overrides: Partial<Organization> = {}): Organization => ({
  name,
  email: `admin@${name}.example`,
  ...overrides,
});

export const user = (id: string, overrides: Partial<User> = {}): User => ({
  id,
  username: `name-of-${id}`,
  email: `${id}@example.com`,
  ...overrides,
});

export const project = (id: string, org: string): Project => ({ id, name: `project ${id}`, organization: org });

export const workspace = (id: string, org: string): Workspace => ({
  id,
  name: `workspace-${id}`,
  organization: org,
  projectId: "prj-0000000000000001",
  workingDirectory: "infra/live",
  vcsRepoUrl: "https://git.example.com/acme/infra",
  vcsBranch: "main",
});

export const team = (id: string, org: string, members: string[] = ["user-1", "user-2"]): Team => ({
  id,
  name: `team ${id}`,
  organization: org,
  visibility: "organization",
  orgPermissions: ["manage-workspaces", "manage-run-tasks"],
  members,
  owners: false,
});

export const policySet = (id: string, org: string): PolicySet => ({ id, name: `set ${id}`, organization: org, kind: "opa" });

export const agentPool = (id: string, org: string): AgentPool => ({ id, name: `pool ${id}`, organization: org });
