import type { OrgPermission, Principal } from "../schemas/common.js";
import { ORG_PERMISSIONS } from "../schemas/common.js";
import type { Project, Team } from "../schemas/directory.js";
import {
  PROJECT_ACCESS_WIRE_KEYS,
  WORKSPACE_ACCESS_WIRE_KEYS,
  type AccessLevel,
  type PermissionSet,
  type ProjectAccess,
  type TeamProjectRecord,
  type WorkspaceAccess,
} from "../schemas/team-projects.js";
import {
  IMPLIED_PERMISSIONS,
  PROJECT_ACCESS_KEYS,
  PROJECT_ACCESS_ORDERS,
  WORKSPACE_ACCESS_KEYS,
  WORKSPACE_ACCESS_ORDERS,
  impliedPermissions,
  rank,
} from "./permission-table.js";

/** Why a principal holds a permission, so a host can explain a decision. */
export type AccessReason =
  | { kind: "owner"; via: "owners-team" | "organization-token" }
  | { kind: "org-permission"; permission: OrgPermission; teamId: string | null }
  | { kind: "grant"; grantId: string; teamId: string; access: AccessLevel };
export type OrgPermissionReason = Extract<AccessReason, { kind: "org-permission" }>;

/** One permission's effective value and every source that gives exactly that value. */
export interface Effective<V> {
  value: V;
  reasons: readonly AccessReason[];
}
export type EffectiveOf<T> = { readonly [K in keyof T]: Effective<T[K]> };

export type EffectiveAccess =
  | {
      hasAccess: true;
      projectId: string;
      organization: string;
      /** Every organization permission the principal holds, directly or through a team. */
      orgPermissions: readonly OrgPermissionReason[];
      projectAccess: EffectiveOf<ProjectAccess>;
      workspaceAccess: EffectiveOf<WorkspaceAccess>;
    }
  // `runs` has no `none`, so "no access at all" cannot be a permission value: it is its own case.
  | { hasAccess: false; projectId: string; organization: string; reason: string };

export interface ResolveProjectAccessInput {
  principal: Principal;
  /** The principal's teams as the directory has them (their organization permissions count). */
  teams: readonly Team[];
  /** The grants of the project; grants of other projects or of foreign teams are ignored. */
  grants: readonly TeamProjectRecord[];
  project: Project;
}

/** Organization tokens and owners-team tokens act as owners (decision D21). */
export const ownerReason = (principal: Principal): AccessReason | null => {
  if (principal.kind === "organization") return { kind: "owner", via: "organization-token" };
  return principal.isOwner ? { kind: "owner", via: "owners-team" } : null;
};

// A team counts only if the principal is on it and it belongs to the principal's organization:
// a stale or foreign team record must never widen access.
const ownTeams = (principal: Principal, teams: readonly Team[]): Team[] =>
  teams.filter((t) => principal.teamIds.includes(t.id) && t.organization === principal.organization);

/** Every organization permission with where it comes from (`teamId: null` = the principal itself). */
export function orgPermissionReasons(principal: Principal, teams: readonly Team[]): OrgPermissionReason[] {
  const direct = principal.orgPermissions.map((permission) => ({ permission, teamId: null }));
  const viaTeams = ownTeams(principal, teams).flatMap((t) =>
    t.orgPermissions.map((permission) => ({ permission, teamId: t.id })),
  );
  return [...direct, ...viaTeams].map((r) => ({ kind: "org-permission", ...r }));
}

/** The principal's organization permissions merged with its teams', once each, in table order. */
export function organizationPermissions(principal: Principal, teams: readonly Team[]): OrgPermission[] {
  const held = new Set(orgPermissionReasons(principal, teams).map((r) => r.permission));
  return ORG_PERMISSIONS.filter((p) => held.has(p));
}

/**
 * What a grant gives. A fixed level is read from the table, not from the stored copy, so a row
 * written under an older table cannot give more (or less) than its level means today.
 */
export const grantPermissions = (grant: TeamProjectRecord): PermissionSet =>
  grant.access === "custom"
    ? { projectAccess: grant.projectAccess, workspaceAccess: grant.workspaceAccess }
    : impliedPermissions(grant.access);

interface Contribution {
  reason: AccessReason;
  projectAccess: ProjectAccess;
  workspaceAccess: WorkspaceAccess;
}

/**
 * The principal's effective permissions on `project`: the maximum over every source (decision D19;
 * the spec's "more restrictive" sentence is overruled by its own example). Sources: the principal's
 * teams' grants, `manage-projects` (admin), `manage-workspaces` (admin workspace permissions only)
 * and ownership (admin, the top of every order, so owners can do everything).
 */
export function resolveProjectAccess(input: ResolveProjectAccessInput): EffectiveAccess {
  const { principal, teams, grants, project } = input;
  const where = { projectId: project.id, organization: project.organization };
  if (principal.organization !== project.organization) {
    return { hasAccess: false, ...where, reason: `project ${project.id} belongs to another organization` };
  }
  const orgPermissions = orgPermissionReasons(principal, teams);
  const parts: Contribution[] = [];
  const owner = ownerReason(principal);
  if (owner) parts.push({ reason: owner, ...IMPLIED_PERMISSIONS.admin });
  for (const reason of orgPermissions) {
    if (reason.permission === "manage-projects") parts.push({ reason, ...IMPLIED_PERMISSIONS.admin });
    if (reason.permission === "manage-workspaces") {
      // Workspaces, not the project: settings stay at their floor (read) and teams at none.
      const { workspaceAccess } = IMPLIED_PERMISSIONS.admin;
      parts.push({ reason, projectAccess: IMPLIED_PERMISSIONS.custom.projectAccess, workspaceAccess });
    }
  }
  for (const grant of grants) {
    if (grant.projectId !== project.id || grant.organization !== project.organization) continue;
    if (!principal.teamIds.includes(grant.teamId)) continue;
    const { id: grantId, teamId, access } = grant;
    parts.push({ reason: { kind: "grant", grantId, teamId, access }, ...grantPermissions(grant) });
  }
  if (parts.length === 0) {
    const reason = `no team of the principal has a grant on project ${project.id}, and no organization permission covers it`;
    return { hasAccess: false, ...where, reason };
  }
  return {
    hasAccess: true,
    ...where,
    orgPermissions,
    projectAccess: fold(PROJECT_ACCESS_ORDERS, PROJECT_ACCESS_KEYS, parts, (p) => p.projectAccess),
    workspaceAccess: fold(WORKSPACE_ACCESS_ORDERS, WORKSPACE_ACCESS_KEYS, parts, (p) => p.workspaceAccess),
  };
}

type Orders<T> = { readonly [K in keyof T]: readonly T[K][] };

function fold<T extends object>(
  orders: Orders<T>,
  keys: readonly (keyof T)[],
  parts: readonly Contribution[],
  pick: (part: Contribution) => T,
): EffectiveOf<T> {
  const out = {} as { [K in keyof T]: Effective<T[K]> };
  for (const key of keys) {
    const order = orders[key];
    let best = -1;
    let reasons: AccessReason[] = [];
    for (const part of parts) {
      const r = rank(order, pick(part)[key]);
      if (r > best) [best, reasons] = [r, [part.reason]];
      else if (r === best) reasons.push(part.reason);
    }
    // Unreachable with validated records; the floor keeps the type honest without a throw.
    out[key] = best < 0
      ? { value: order[0] as T[typeof key], reasons: [] }
      : { value: order[best] as T[typeof key], reasons };
  }
  return out;
}

/** The plain permission values, without reasons; `null` when the principal has no access. */
export function toPermissionSet(effective: EffectiveAccess): PermissionSet | null {
  if (!effective.hasAccess) return null;
  const values = <T>(e: EffectiveOf<T>, keys: readonly (keyof T)[]): T => {
    const out = {} as T;
    for (const key of keys) out[key] = e[key].value;
    return out;
  };
  return {
    projectAccess: values(effective.projectAccess, PROJECT_ACCESS_KEYS),
    workspaceAccess: values(effective.workspaceAccess, WORKSPACE_ACCESS_KEYS),
  };
}

/** A reason in words, for logs and audit trails. */
export function describeReason(reason: AccessReason): string {
  switch (reason.kind) {
    case "owner":
      return reason.via === "organization-token" ? "organization token" : "organization owner";
    case "org-permission":
      return `organization permission ${reason.permission}${reason.teamId ? ` (team ${reason.teamId})` : ""}`;
    case "grant":
      return `team-project ${reason.grantId} (team ${reason.teamId}, access ${reason.access})`;
  }
}

/** Wire name of a permission (`workspace-access.run-tasks`), for messages that name it. */
export const permissionWireName = (
  scope: "project" | "workspace",
  key: keyof ProjectAccess | keyof WorkspaceAccess,
): string =>
  scope === "project"
    ? `project-access.${PROJECT_ACCESS_WIRE_KEYS[key as keyof ProjectAccess]}`
    : `workspace-access.${WORKSPACE_ACCESS_WIRE_KEYS[key as keyof WorkspaceAccess]}`;
