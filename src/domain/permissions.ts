import type { OrgPermission, Principal } from "../schemas/common.js";
import type { Team } from "../schemas/directory.js";
import type { ProjectAccess, TeamProjectRecord, WorkspaceAccess } from "../schemas/team-projects.js";
import { PROJECT_ACCESS_ORDERS, WORKSPACE_ACCESS_ORDERS, rank } from "./permission-table.js";
import {
  describeReason,
  orgPermissionReasons,
  ownerReason,
  permissionWireName,
  type AccessReason,
  type Effective,
  type EffectiveAccess,
} from "./project-access.js";

// One import site for the whole permission model: table, resolver and decisions.
export * from "./permission-table.js";
export * from "./project-access.js";

/** Decisions a route asks about one project (and its workspaces). Owners pass every one. */
export const ACTIONS = [
  "project:read",
  "variables:read",
  "variables:write",
  "runs:read",
  "runs:override",
  "team-access:read-all",
  "team-access:manage",
  "run-tasks:manage",
] as const;
export type Action = (typeof ACTIONS)[number];

/** Decisions that concern the organization, not one project (decision D21). */
export const ORGANIZATION_ACTIONS = [
  "policy-set-parameters:read",
  "policy-set-parameters:write",
  "agent-tokens:manage",
  "agent-pools:read",
  "api-tokens:manage",
  "run-tasks:configure",
  "audit-trail:read",
] as const;
export type OrganizationAction = (typeof ORGANIZATION_ACTIONS)[number];

export const isAction = (value: string): value is Action => (ACTIONS as readonly string[]).includes(value);
export const isOrganizationAction = (value: string): value is OrganizationAction =>
  (ORGANIZATION_ACTIONS as readonly string[]).includes(value);

/** A pure decision; `reasons` on an allow names what granted it, `reason` on a deny says why not. */
export type Decision =
  | { allowed: true; reasons: readonly AccessReason[] }
  | { allowed: false; reason: string };

type Requirement =
  | { [K in keyof ProjectAccess]: { scope: "project"; key: K; atLeast: ProjectAccess[K] } }[keyof ProjectAccess]
  | { [K in keyof WorkspaceAccess]: { scope: "workspace"; key: K; atLeast: WorkspaceAccess[K] } }[keyof WorkspaceAccess];

interface ActionRule {
  requires: Requirement;
  /** An organization permission that allows the action on its own (given some access to the project). */
  orgPermission?: OrgPermission;
}

// decision D21. Owners need no entry: their admin permissions are the top of every order.
const ACTION_RULES = {
  "project:read": { requires: { scope: "project", key: "settings", atLeast: "read" } },
  "variables:read": { requires: { scope: "workspace", key: "variables", atLeast: "read" } },
  "variables:write": { requires: { scope: "workspace", key: "variables", atLeast: "write" } },
  // Task stages and results are run data: reading them is reading runs.
  "runs:read": { requires: { scope: "workspace", key: "runs", atLeast: "read" } },
  "runs:override": {
    requires: { scope: "workspace", key: "policyOverrides", atLeast: true },
    orgPermission: "manage-policy-overrides",
  },
  "team-access:read-all": { requires: { scope: "project", key: "teams", atLeast: "manage" } },
  "team-access:manage": { requires: { scope: "project", key: "teams", atLeast: "manage" } },
  "run-tasks:manage": {
    requires: { scope: "workspace", key: "runTasks", atLeast: true },
    orgPermission: "manage-run-tasks",
  },
} as const satisfies Record<Action, ActionRule>;

// decision D21: owners, or the one organization permission named here; null: owners only.
const ORGANIZATION_ACTION_RULES = {
  "policy-set-parameters:read": "manage-policies",
  "policy-set-parameters:write": "manage-policies",
  "agent-tokens:manage": "manage-agent-pools",
  // decision D34: a pool and its agents are read by those who manage it, as its tokens are.
  "agent-pools:read": "manage-agent-pools",
  // API tokens act as their team, owners' included; no permission short of owners lists or revokes them.
  "api-tokens:manage": null,
  "run-tasks:configure": "manage-run-tasks",
  // decision D53: HCP reads its audit trail with an organization token only; here, owners.
  "audit-trail:read": null,
} as const satisfies Record<OrganizationAction, OrgPermission | null>;

const explain = (reasons: readonly AccessReason[]): string =>
  reasons.length === 0 ? "no source" : reasons.map(describeReason).join(", ");

/**
 * Whether `effective` (from `resolveProjectAccess`) allows `action`. Without any access to the
 * project every action is denied, organization permissions included: the project is invisible then
 * (decision D4), so there is nothing to override or configure in it.
 */
export function can(effective: EffectiveAccess, action: Action): Decision {
  if (!effective.hasAccess) return { allowed: false, reason: `${action}: ${effective.reason}` };
  const rule: ActionRule = ACTION_RULES[action];
  const { scope, key, atLeast } = rule.requires;
  const held: Effective<unknown> =
    scope === "project"
      ? effective.projectAccess[key as keyof ProjectAccess]
      : effective.workspaceAccess[key as keyof WorkspaceAccess];
  const order: readonly unknown[] =
    scope === "project"
      ? PROJECT_ACCESS_ORDERS[key as keyof ProjectAccess]
      : WORKSPACE_ACCESS_ORDERS[key as keyof WorkspaceAccess];
  if (rank(order, held.value) >= rank(order, atLeast)) return { allowed: true, reasons: held.reasons };
  const viaOrg = effective.orgPermissions.filter((r) => r.permission === rule.orgPermission);
  if (viaOrg.length > 0) return { allowed: true, reasons: viaOrg };
  const name = permissionWireName(scope, key);
  const alternative = rule.orgPermission ? ` or the organization permission ${rule.orgPermission}` : "";
  return {
    allowed: false,
    reason:
      `${action} needs ${name} ${String(atLeast)}${alternative} on project ${effective.projectId}; ` +
      `effective ${name} is ${String(held.value)} (${explain(held.reasons)})`,
  };
}

export interface OrganizationScope {
  principal: Principal;
  teams: readonly Team[];
  /** The organization that owns the object acted on (policy set, agent pool, run task). */
  organization: string;
}

/** Whether the principal may perform an organization-scoped action in `organization`. */
export function canInOrganization(scope: OrganizationScope, action: OrganizationAction): Decision {
  const { principal, teams, organization } = scope;
  if (principal.organization !== organization) {
    return { allowed: false, reason: `${action}: the principal belongs to another organization` };
  }
  const owner = ownerReason(principal);
  if (owner) return { allowed: true, reasons: [owner] };
  const needed: OrgPermission | null = ORGANIZATION_ACTION_RULES[action];
  if (needed === null) return { allowed: false, reason: `${action} needs an organization owner` };
  const reasons = orgPermissionReasons(principal, teams).filter((r) => r.permission === needed);
  if (reasons.length > 0) return { allowed: true, reasons };
  return { allowed: false, reason: `${action} needs an organization owner or the organization permission ${needed}` };
}

/**
 * Whether the principal may see one grant of the project `effective` was resolved for (decision
 * D21): members see their own teams' grants, secret teams included; owners and principals who
 * manage the project's team access see all of them.
 */
export function canReadGrant(effective: EffectiveAccess, principal: Principal, grant: TeamProjectRecord): Decision {
  const sameProject = grant.projectId === effective.projectId && grant.organization === effective.organization;
  if (sameProject && principal.organization === grant.organization && principal.teamIds.includes(grant.teamId)) {
    const { id: grantId, teamId, access } = grant;
    return { allowed: true, reasons: [{ kind: "grant", grantId, teamId, access }] };
  }
  if (!sameProject) {
    return { allowed: false, reason: `team-project ${grant.id} is not a grant on project ${effective.projectId}` };
  }
  return can(effective, "team-access:read-all");
}
