import { notFound } from "../../errors.js";
import { AGENT_TOKEN_SORTS, type AgentTokenView } from "../../schemas/agent-tokens.js";
import type { AgentPool } from "../../schemas/directory.js";
import { creatorForPrincipal } from "../../services/agent-tokens.js";
import { readResourceBody } from "../documents.js";
import type { ResourceDefinition } from "../jsonapi.js";
import { AgentTokenAttributes } from "../../schemas/wire.js";
import { toPageRequest } from "../pagination.js";
import type { Route, RouteContext } from "../types.js";
import { apiTokenData, loadApiToken } from "./team-tokens.js";

const TYPE = "authentication-tokens";
/** decision D22: go-tfe sends `agent-tokens`, the spec says `authentication-tokens`; both work. */
const CREATE_TYPES = [TYPE, "agent-tokens"] as const;

/** Agent tokens, spec 2.7 and 4.7 with decisions D2, D3, D7, D21, D22. */
export const agentTokenResource = (basePath: string): ResourceDefinition => ({
  type: TYPE,
  attributes: AgentTokenAttributes,
  self: (d) => `${basePath}/authentication-tokens/${String(d.id)}`,
  relationships: {
    // Tokens here are never team-scoped; the real API writes the member as `{ "data": null }`.
    team: { type: "teams" },
    createdBy: { type: (d) => String(d.createdByType) },
  },
});

/**
 * decision D49: go-tfe decodes `created-by` into a `*User` and rejects any other type. HCP Terraform's
 * team and organization tokens act as a service account user of the team or organization, so a
 * token one of them made names that user: `api-team_<team id>`, `api-org_<organization>` (the
 * programmatic view keeps the team or organization itself).
 */
export function creatorUserId(creator: AgentTokenView["createdBy"]): string {
  if (creator.type === "users") return creator.id;
  return creator.type === "teams" ? `api-team_${creator.id}` : `api-org_${creator.id}`;
}

/** Relationship members hold the linkage id; `token` stays whatever the service gave (null but on create). */
const toData = (view: AgentTokenView) => ({
  ...view,
  team: null,
  createdBy: creatorUserId(view.createdBy),
  createdByType: "users",
});

/** decision D21: the pool's organization is the target; an unknown or forbidden pool is 404 alike (D4). */
async function loadPool(ctx: RouteContext): Promise<AgentPool> {
  const pool = await ctx.app.services.directory.agentPools.get(ctx.params.agent_pool_id!);
  if (!pool) throw notFound();
  await ctx.authorize({ organization: pool.organization });
  return pool;
}

/**
 * The token behind `/authentication-tokens/:token_id`: HCP Terraform serves agent tokens and team
 * API tokens there alike, so an API token's id is tried first (owners only), then an
 * agent token's (this route's action). Neither, or not the caller's to see: 404 (D4).
 */
async function loadToken(ctx: RouteContext): Promise<{ kind: "api" | "agent"; id: string; data: Record<string, unknown> }> {
  const id = ctx.params.token_id!;
  const api = await loadApiToken(ctx, id);
  if (api) return { kind: "api", id, data: apiTokenData(api) };
  const view: AgentTokenView = await ctx.app.services.agentTokens.get(id);
  await ctx.authorize({ organization: view.organization });
  return { kind: "agent", id, data: toData(view) };
}

export const agentTokenRoutes: Route[] = [
  {
    method: "GET",
    path: "/agent-pools/:agent_pool_id/authentication-tokens",
    auth: "principal",
    query: { page: "always", sort: AGENT_TOKEN_SORTS },
    async handle(ctx) {
      const pool = await loadPool(ctx);
      const page = ctx.query.page!;
      const sort = ctx.query.sort;
      const result = await ctx.app.services.agentTokens.list(pool.id, { page: toPageRequest(page), sort });
      const document = ctx.app.jsonapi.collection(TYPE, result.items.map(toData), {
        url: ctx.url,
        pagination: { ...page, total: result.total },
      });
      return { status: 200, document };
    },
  },
  {
    method: "GET",
    path: "/authentication-tokens/:token_id",
    auth: "principal",
    async handle(ctx) {
      return { status: 200, document: ctx.app.jsonapi.resource(TYPE, (await loadToken(ctx)).data) };
    },
  },
  {
    method: "POST",
    path: "/agent-pools/:agent_pool_id/authentication-tokens",
    auth: "principal",
    async handle(ctx) {
      const pool = await loadPool(ctx);
      const body = readResourceBody(ctx.body, CREATE_TYPES);
      // The service validates `description` with zod; the cast only names the expected shape.
      const created = await ctx.app.services.agentTokens.create(pool.id, {
        description: body.attributes.description as string,
        createdBy: creatorForPrincipal(ctx.principal),
      });
      return { status: 201, document: ctx.app.jsonapi.resource(TYPE, toData(created)) };
    },
  },
  {
    method: "DELETE",
    path: "/authentication-tokens/:token_id",
    auth: "principal",
    async handle(ctx) {
      const token = await loadToken(ctx);
      if (token.kind === "agent") await ctx.app.services.agentTokens.delete(token.id);
      // A racing revoke got there first: gone either way, answered like any missing token.
      else if (!(await ctx.app.services.directory.revokeApiToken(token.id))) throw notFound();
      return { status: 204 };
    },
  },
];
