import type { Principal } from "../schemas/common.js";

/** What an action is checked against. */
export interface AccessTarget {
  organization: string;
  projectId?: string;
  workspaceId?: string;
}

/**
 * Placeholder authorization until the team-access resolver lands: a principal of the target's
 * organization who is an owner (or the organization itself) may do everything, nobody else anything.
 * Routes already call it through the route-permission table, so the wiring is in place.
 */
export async function authorizeOwnersOnly(principal: Principal, _action: string, target: AccessTarget): Promise<boolean> {
  if (principal.organization !== target.organization) return false;
  return principal.isOwner || principal.kind === "organization";
}
