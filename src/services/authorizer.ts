import {
  can,
  canInOrganization,
  isAction,
  isOrganizationAction,
  resolveProjectAccess,
  type Decision,
  type EffectiveAccess,
} from "../domain/permissions.js";
import type { Principal } from "../schemas/common.js";
import type { Project, Team } from "../schemas/directory.js";
import type { ServiceContext } from "./context.js";

/** What an action is checked against (structurally the HTTP layer's `AuthTarget`). */
export interface AuthorizationTarget {
  organization: string;
  projectId?: string;
  workspaceId?: string;
}

/** The action of routes anyone may call; every other action is a resolver action. */
export const PUBLIC_ACTION = "public";

/** Whether the authorizer knows `action`: `public`, a project action or an organization action (D21). */
export const isAuthorizerAction = (action: string): boolean =>
  action === PUBLIC_ACTION || isAction(action) || isOrganizationAction(action);

/**
 * The principal's teams as the directory has them now. The resolver also checks membership and
 * organization, so a stale id in `teamIds` never widens access.
 */
export async function principalTeams(ctx: ServiceContext, principal: Principal): Promise<Team[]> {
  const teams = await Promise.all(principal.teamIds.map((id) => ctx.storage.teams.get(id)));
  return teams.filter((t): t is Team => t !== null && t.organization === principal.organization);
}

/**
 * The principal's effective permissions on `project` (decision D19): its teams' grants on the
 * project (read from storage, only those teams' rows) folded with organization permissions and
 * ownership by the pure resolver.
 */
export async function effectiveProjectAccess(ctx: ServiceContext, principal: Principal, project: Project): Promise<EffectiveAccess> {
  const [teams, grants] = await Promise.all([
    principalTeams(ctx, principal),
    principal.organization === project.organization ? ctx.storage.teamProjects.listForTeams(project.id, principal.teamIds) : [],
  ]);
  return resolveProjectAccess({ principal, teams, grants, project });
}

/**
 * The authorizer behind every route (decision D21): `(principal, action, target) => allowed`.
 * Organization actions go to `canInOrganization`; project actions resolve the principal's access on
 * the target's project (or the project of the target's workspace) and ask `can`. A principal of
 * another organization, a target without a project for a project action, an unknown project and an
 * unknown action are all denied, which the HTTP layer answers with 404 (decision D4).
 */
export function createAuthorizer(ctx: ServiceContext) {
  const projectOf = async (target: AuthorizationTarget): Promise<Project | null> => {
    let projectId = target.projectId;
    if (projectId === undefined && target.workspaceId !== undefined) {
      projectId = (await ctx.storage.workspaces.get(target.workspaceId))?.projectId;
    }
    if (projectId === undefined) return null;
    const project = await ctx.storage.projects.get(projectId);
    return project && project.organization === target.organization ? project : null;
  };

  const decide = async (principal: Principal, action: string, target: AuthorizationTarget): Promise<Decision> => {
    if (action === PUBLIC_ACTION) return { allowed: true, reasons: [] };
    if (principal.organization !== target.organization) {
      return { allowed: false, reason: `${action}: the principal belongs to another organization` };
    }
    if (isOrganizationAction(action)) {
      const teams = await principalTeams(ctx, principal);
      return canInOrganization({ principal, teams, organization: target.organization }, action);
    }
    if (isAction(action)) {
      const project = await projectOf(target);
      if (!project) return { allowed: false, reason: `${action}: the target names no project of ${target.organization}` };
      return can(await effectiveProjectAccess(ctx, principal, project), action);
    }
    return { allowed: false, reason: `${action}: not an action the authorizer knows` };
  };

  return async function authorize(principal: Principal, action: string, target: AuthorizationTarget): Promise<boolean> {
    const decision = await decide(principal, action, target);
    // Ids and permission names only: a denial explains itself to the host's developers.
    if (!decision.allowed) ctx.logger.debug("authorization denied", { action, reason: decision.reason });
    return decision.allowed;
  };
}
export type AuthorizeFn = ReturnType<typeof createAuthorizer>;
