/**
 * The route-to-permission table (decision D21): every route names the action it needs, in one place.
 * Creating a handler with a route that has no entry fails, and a test walks every route.
 */
export const ROUTE_ACTIONS = [
  "public",
  "variables:read",
  "variables:write",
  "policy-set-parameters:read",
  "policy-set-parameters:write",
] as const;
export type RouteAction = (typeof ROUTE_ACTIONS)[number];

export const ROUTE_PERMISSIONS: Readonly<Record<string, RouteAction>> = {
  "GET /ping": "public",

  "GET /workspaces/:workspace_id/vars": "variables:read",
  "GET /workspaces/:workspace_id/vars/:variable_id": "variables:read",
  "POST /workspaces/:workspace_id/vars": "variables:write",
  "PATCH /workspaces/:workspace_id/vars/:variable_id": "variables:write",
  "DELETE /workspaces/:workspace_id/vars/:variable_id": "variables:write",

  "GET /policy-sets/:policy_set_id/parameters": "policy-set-parameters:read",
  "GET /policy-sets/:policy_set_id/parameters/:parameter_id": "policy-set-parameters:read",
  "POST /policy-sets/:policy_set_id/parameters": "policy-set-parameters:write",
  "PATCH /policy-sets/:policy_set_id/parameters/:parameter_id": "policy-set-parameters:write",
  "DELETE /policy-sets/:policy_set_id/parameters/:parameter_id": "policy-set-parameters:write",
};
