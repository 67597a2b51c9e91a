import * as z from "zod";
import type { Dialect } from "../../schemas/common.js";
import { AgentTokenCreateSchema, AGENT_TOKEN_SORTS } from "../../schemas/agent-tokens.js";
import { TeamProjectCreateAttributesSchema, TeamProjectUpdateAttributesSchema } from "../../schemas/team-projects.js";
import { PolicySetParameterCreateSchema, PolicySetParameterUpdateSchema, workspaceVariableSchemas } from "../../schemas/variables.js";
import { TFP_API_VERSION } from "../../http/routes/ping.js";
import { PAGE_PARAMS, type OperationDoc } from "./types.js";

/** A required to-one relationship in a request body: `{ data: { type, id } }`. */
export const toOne = (type: string) => z.object({ data: z.object({ type: z.literal(type), id: z.string().min(1) }) });

const VARS_TAG = "Workspace variables";
const PARAMS_TAG = "Policy set parameters";
const TEAM_TAG = "Team access to projects";
const TOKEN_TAG = "Agent tokens";

/** The ping, workspace variables and policy set parameters (spec 4.4, 4.5). */
function variableOperations(dialect: Dialect): Record<string, OperationDoc> {
  const vars = workspaceVariableSchemas(dialect);
  const varsTag = VARS_TAG;
  const paramsTag = PARAMS_TAG;
  return {
    "GET /ping": {
      tag: "Health",
      summary: "Answers 204 when the API is up",
      description: "Carries `TFP-API-Version` and, with the rate limit on, the caller's `X-RateLimit-*` headers (D33); never refused with 429.",
      security: "none",
      success: {
        status: 204,
        body: null,
        headers: { "TFP-API-Version": { description: `The HCP Terraform API version runplane speaks ("${TFP_API_VERSION}"); go-tfe keeps it for \`RemoteAPIVersion()\` (D33).`, schema: { type: "string" } } },
      },
      never: [429],
    },

    "GET /workspaces/:workspace_id/vars": { tag: varsTag, summary: "List a workspace's variables (not paged, D7)", success: { status: 200, body: { collection: "vars", paging: "never" } } },
    "GET /workspaces/:workspace_id/all-vars": {
      tag: varsTag,
      summary: "List every variable a run of the workspace gets (go-tfe ListAll): runplane has no variable sets, so the workspace's own, as `vars` lists them (D49)",
      success: { status: 200, body: { collection: "vars", paging: "never" } },
    },
    "GET /workspaces/:workspace_id/vars/:variable_id": { tag: varsTag, summary: "Show a variable", success: { status: 200, body: { resource: "vars" } } },
    "POST /workspaces/:workspace_id/vars": {
      tag: varsTag,
      summary: "Create a variable (the deprecated top-level `filter` must name this workspace, D12)",
      body: { types: ["vars"], attributes: vars.create },
      success: { status: 201, body: { resource: "vars" } },
    },
    "PATCH /workspaces/:workspace_id/vars/:variable_id": {
      tag: varsTag,
      summary: "Update a variable (sensitive ones: only value and description, D10)",
      body: { types: ["vars"], attributes: vars.update },
      success: { status: 200, body: { resource: "vars" } },
      errors: [409],
    },
    "DELETE /workspaces/:workspace_id/vars/:variable_id": { tag: varsTag, summary: "Delete a variable", success: { status: 204, body: null } },

    "GET /policy-sets/:policy_set_id/parameters": {
      tag: paramsTag,
      summary: "List a policy set's parameters (paged only when a page is asked for)",
      query: PAGE_PARAMS,
      success: { status: 200, body: { collection: "vars", variant: "policy-set-parameter", paging: "optional" } },
    },
    "GET /policy-sets/:policy_set_id/parameters/:parameter_id": { tag: paramsTag, summary: "Show a parameter", success: { status: 200, body: { resource: "vars", variant: "policy-set-parameter" } } },
    "POST /policy-sets/:policy_set_id/parameters": {
      tag: paramsTag,
      summary: "Create a parameter",
      body: { types: ["vars"], attributes: PolicySetParameterCreateSchema },
      success: { status: 201, body: { resource: "vars", variant: "policy-set-parameter" } },
    },
    "PATCH /policy-sets/:policy_set_id/parameters/:parameter_id": {
      tag: paramsTag,
      summary: "Update a parameter",
      body: { types: ["vars"], attributes: PolicySetParameterUpdateSchema },
      success: { status: 200, body: { resource: "vars", variant: "policy-set-parameter" } },
      errors: [409],
    },
    "DELETE /policy-sets/:policy_set_id/parameters/:parameter_id": { tag: paramsTag, summary: "Delete a parameter", success: { status: 204, body: null } },
  };
}

/** Team access to projects and agent tokens (spec 4.6, 4.7). */
function accessOperations(): Record<string, OperationDoc> {
  const teamTag = TEAM_TAG;
  const tokenTag = TOKEN_TAG;
  return {
    "GET /team-projects": {
      tag: teamTag,
      summary: "List a project's team access grants",
      query: [
        { name: "filter[project][id]", description: "the project (required; 400 without it)", schema: z.string(), required: true },
        { name: "filter[team][id]", description: "only this team's grant", schema: z.string() },
        ...PAGE_PARAMS,
      ],
      success: { status: 200, body: { collection: "team-projects", paging: "always" } },
      errors: [400, 422],
    },
    "GET /team-projects/:id": { tag: teamTag, summary: "Show a grant", success: { status: 200, body: { resource: "team-projects" } } },
    "POST /team-projects": {
      tag: teamTag,
      summary: "Grant a team access to a project (404 for an unknown project or team, or another organization's team: D5a)",
      body: { types: ["team-projects"], attributes: TeamProjectCreateAttributesSchema, relationships: z.object({ project: toOne("projects"), team: toOne("teams") }) },
      success: { status: 201, body: { resource: "team-projects" } },
    },
    "PATCH /team-projects/:id": {
      tag: teamTag,
      summary: "Change a grant's access",
      body: { types: ["team-projects"], attributes: TeamProjectUpdateAttributesSchema },
      success: { status: 200, body: { resource: "team-projects" } },
      errors: [409],
    },
    "DELETE /team-projects/:id": { tag: teamTag, summary: "Revoke a grant", success: { status: 204, body: null } },

    "GET /agent-pools/:agent_pool_id/authentication-tokens": {
      tag: tokenTag,
      summary: "List an agent pool's tokens (metadata only)",
      query: [{ name: "sort", description: "by creation time (400 otherwise)", schema: z.enum(AGENT_TOKEN_SORTS) }, ...PAGE_PARAMS],
      success: { status: 200, body: { collection: "authentication-tokens", paging: "always" } },
      errors: [400, 422],
    },
    "POST /agent-pools/:agent_pool_id/authentication-tokens": {
      tag: tokenTag,
      summary: "Create a token: the secret is in `token` of this response only (`agent-tokens` accepted as the type, D22)",
      body: { types: ["authentication-tokens", "agent-tokens"], attributes: AgentTokenCreateSchema },
      success: { status: 201, body: { resource: "authentication-tokens" } },
    },
    "GET /authentication-tokens/:token_id": {
      tag: tokenTag,
      summary: "Show an agent token, or (owners only) a team API token; `token` is null",
      success: { status: 200, body: { resource: "authentication-tokens" } },
    },
    "DELETE /authentication-tokens/:token_id": {
      tag: tokenTag,
      summary: "Revoke an agent token, or (owners only) a team API token, effective on the next request",
      success: { status: 204, body: null },
    },
    "GET /agent-pools/:agent_pool_id/agents": {
      tag: "Agents",
      summary: "List an agent pool's agents (D34), oldest first",
      query: [
        { name: "filter[last-ping-since]", description: "only agents that reported at or after this ISO 8601 instant (400 otherwise)", schema: z.string() },
        ...PAGE_PARAMS,
      ],
      success: { status: 200, body: { collection: "agents", paging: "always" } },
      errors: [400, 422],
    },
    "GET /agents/:agent_id": { tag: "Agents", summary: "Show an agent: status, address and latest report (D34)", success: { status: 200, body: { resource: "agents" } } },
    "DELETE /agents/:agent_id": {
      tag: "Agents",
      summary: "Delete an agent that is unknown, errored or exited (D46); 409 while it is idle or busy",
      success: { status: 204, body: null },
      errors: [409],
    },
    "GET /teams/:team_id/authentication-tokens": {
      tag: "Team tokens",
      summary: "List a team's API tokens, metadata only (owners only; 404 otherwise)",
      query: PAGE_PARAMS,
      success: { status: 200, body: { collection: "authentication-tokens", paging: "always" } },
      errors: [422],
    },
  };
}

/** decision D53: the audit trail, in HCP Terraform's own (not JSON:API) shape. */
function auditOperations(): Record<string, OperationDoc> {
  return {
    "GET /organization/audit-trail": {
      tag: "Audit trail",
      summary: "List the organization's audit events, oldest first (owners only; 404 otherwise)",
      description:
        "HCP Terraform's audit trail shape, not JSON:API (go-tfe `AuditTrails.List`): `data` events with `id`, `version`, `type`, `timestamp`, `auth`, `request`, `resource` (`action`, `meta` with the changed fields and the hash chain, D53) and `pagination` beside it.",
      query: [
        { name: "since", description: "only events after this ISO-8601 UTC time; anything else is 400", schema: z.string() },
        { name: "page[number]", description: "page number, from 1", schema: z.int().min(1).max(1_000_000) },
        { name: "page[size]", description: "events per page, 1 to 1,000, default 1,000 (HCP's)", schema: z.int().min(1).max(1_000) },
      ],
      success: { status: 200, body: { media: "application/json", format: "json" } },
      errors: [400],
    },
  };
}

/** Variables, policy set parameters, team access to projects and agent tokens (spec 4.4-4.7). */
export function configurationOperations(dialect: Dialect): Record<string, OperationDoc> {
  return { ...variableOperations(dialect), ...accessOperations(), ...auditOperations() };
}
