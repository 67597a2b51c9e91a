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
  "project:read",
  "team-access:manage",
  "agent-tokens:manage",
  "agent-pools:read",
  "api-tokens:manage",
  "runs:read",
  "runs:override",
  "run-tasks:configure",
  "run-tasks:manage",
  "audit-trail:read",
] as const;
export type RouteAction = (typeof ROUTE_ACTIONS)[number];

export const ROUTE_PERMISSIONS: Readonly<Record<string, RouteAction>> = {
  "GET /ping": "public",

  "GET /workspaces/:workspace_id/vars": "variables:read",
  "GET /workspaces/:workspace_id/all-vars": "variables:read",
  "GET /workspaces/:workspace_id/vars/:variable_id": "variables:read",
  "POST /workspaces/:workspace_id/vars": "variables:write",
  "PATCH /workspaces/:workspace_id/vars/:variable_id": "variables:write",
  "DELETE /workspaces/:workspace_id/vars/:variable_id": "variables:write",

  "GET /policy-sets/:policy_set_id/parameters": "policy-set-parameters:read",
  "GET /policy-sets/:policy_set_id/parameters/:parameter_id": "policy-set-parameters:read",
  "POST /policy-sets/:policy_set_id/parameters": "policy-set-parameters:write",
  "PATCH /policy-sets/:policy_set_id/parameters/:parameter_id": "policy-set-parameters:write",
  "DELETE /policy-sets/:policy_set_id/parameters/:parameter_id": "policy-set-parameters:write",

  // decision D21: reads need some access to the project; which grants show is decided per grant.
  "GET /team-projects": "project:read",
  "GET /team-projects/:id": "project:read",
  "POST /team-projects": "team-access:manage",
  "PATCH /team-projects/:id": "team-access:manage",
  "DELETE /team-projects/:id": "team-access:manage",

  // decision D21: reading agent tokens needs the same right as managing them (owners or manage-agent-pools).
  "GET /agent-pools/:agent_pool_id/authentication-tokens": "agent-tokens:manage",
  "POST /agent-pools/:agent_pool_id/authentication-tokens": "agent-tokens:manage",
  // An API token's id is checked against api-tokens:manage by the route itself: HCP Terraform
  // serves agent and team tokens under this one path, the id tells which.
  "GET /authentication-tokens/:token_id": "agent-tokens:manage",
  "DELETE /authentication-tokens/:token_id": "agent-tokens:manage",

  // decision D34: a pool's agents are read by who may read the pool (owners or manage-agent-pools).
  "GET /agent-pools/:agent_pool_id/agents": "agent-pools:read",
  "GET /agents/:agent_id": "agent-pools:read",
  // decision D46: removing an agent's record is managing the pool's agents (owners or manage-agent-pools).
  "DELETE /agents/:agent_id": "agent-tokens:manage",

  // API tokens (the owners' included) are listed and revoked by owners only.
  "GET /teams/:team_id/authentication-tokens": "api-tokens:manage",

  // decision D53: the audit trail is read with an organization-level credential: owners only.
  "GET /organization/audit-trail": "audit-trail:read",

  // decision D21: organization run tasks need manage-run-tasks (or owners); workspace tasks the
  // project's run-tasks permission; stages, results and outcomes runs >= read; override its own right.
  "GET /organizations/:organization_name/tasks": "run-tasks:configure",
  "POST /organizations/:organization_name/tasks": "run-tasks:configure",
  "GET /tasks/:task_id": "run-tasks:configure",
  "PATCH /tasks/:task_id": "run-tasks:configure",
  "DELETE /tasks/:task_id": "run-tasks:configure",
  "GET /workspaces/:workspace_id/tasks": "run-tasks:manage",
  "POST /workspaces/:workspace_id/tasks": "run-tasks:manage",
  "GET /workspaces/:workspace_id/tasks/:workspace_task_id": "run-tasks:manage",
  "PATCH /workspaces/:workspace_id/tasks/:workspace_task_id": "run-tasks:manage",
  "DELETE /workspaces/:workspace_id/tasks/:workspace_task_id": "run-tasks:manage",
  "GET /runs/:run_id/task-stages": "runs:read",
  "GET /task-stages/:task_stage_id": "runs:read",
  "POST /task-stages/:task_stage_id/actions/override": "runs:override",
  "GET /task-results/:task_result_id": "runs:read",
  "GET /task-results/:task_result_id/outcomes": "runs:read",
  // decision D31: attempts are read like their result; a resend needs the workspace's run-tasks
  // permission (the people who run its integrations), and the route also checks runs:read.
  "GET /task-results/:task_result_id/delivery-attempts": "runs:read",
  "POST /task-results/:task_result_id/actions/retry": "run-tasks:manage",
  "GET /task-result-outcomes/:outcome_id": "runs:read",
  "GET /task-result-outcomes/:outcome_id/body": "runs:read",
  // decision D17: no API principal; the route checks the result's bearer access token itself.
  "PATCH /task-results/:task_result_id/callback": "public",
  // decision D24: a result's access token (checked by the route) or an API credential with runs >= read.
  "GET /plans/:plan_id/json-output": "runs:read",
  "GET /configuration-versions/:configuration_version_id/download": "runs:read",

  // The read side of a run (D24), `runs >= read` on its workspace. The plan and its log also
  // take the result's access token for its own run (checked by the route, as D24's plan JSON).
  "GET /runs/:run_id": "runs:read",
  // decision D49: checked on each run's workspace; the organization's list keeps the readable ones.
  "GET /workspaces/:workspace_id/runs": "runs:read",
  "GET /organizations/:organization_name/runs": "runs:read",
  "GET /runs/:run_id/plan": "runs:read",
  "GET /plans/:plan_id": "runs:read",
  "GET /plans/:plan_id/log": "runs:read",
  "GET /runs/:run_id/apply": "runs:read",
  "GET /applies/:apply_id": "runs:read",
  "GET /applies/:apply_id/log": "runs:read",
  // decision D32: `log-read-url`; no API principal, the capability in the path is the credential.
  "GET /logs/:capability": "public",
  "GET /runs/:run_id/run-events": "runs:read",
  "GET /runs/:run_id/policy-checks": "runs:read",
  // Read by id like the run they belong to; the id names the run (D36).
  "GET /run-events/:run_event_id": "runs:read",
  "GET /policy-checks/:policy_check_id": "runs:read",
  "GET /policy-checks/:policy_check_id/output": "runs:read",
  "GET /configuration-versions/:configuration_version_id": "runs:read",
  "GET /runs/:run_id/comments": "runs:read",
  "GET /comments/:comment_id": "runs:read",
  // Whoever may read a run may comment on it: an integration reporting with a read-only team token too.
  "POST /runs/:run_id/comments": "runs:read",
};
