import { notFound } from "../../errors.js";
import type { AgentView } from "../../schemas/agents.js";
import { AgentAttributes } from "../../schemas/wire.js";
import { LAST_PING_SINCE } from "../../services/agents.js";
import type { ResourceDefinition } from "../jsonapi.js";
import { toPageRequest } from "../pagination.js";
import type { Route } from "../types.js";

const TYPE = "agents";

/** decision D34: the Agents API as HCP Terraform has it (`GET /agent-pools/:id/agents`, `GET /agents/:id`). */
export const agentResource = (basePath: string): ResourceDefinition => ({
  type: TYPE,
  attributes: AgentAttributes,
  self: (d) => `${basePath}/agents/${encodeURIComponent(String(d.id))}`,
});

/** Only the attributes go-tfe's `Agent` decodes: the token and pool stay inside. */
const toData = (a: AgentView) => ({ id: a.id, name: a.name, status: a.status, ipAddress: a.ipAddress, lastPingAt: a.lastPingAt });

export const agentRoutes: Route[] = [
  {
    method: "GET",
    path: "/agent-pools/:agent_pool_id/agents",
    auth: "principal",
    query: { page: "always", filters: [{ name: LAST_PING_SINCE }] },
    async handle(ctx) {
      // decision D21: the pool's organization is the target; an unknown or forbidden pool is 404 alike (D4).
      const pool = await ctx.app.services.directory.agentPools.get(ctx.params.agent_pool_id!);
      if (!pool) throw notFound();
      await ctx.authorize({ organization: pool.organization });
      const page = ctx.query.page!;
      const lastPingSince = ctx.query.filters[LAST_PING_SINCE];
      const result = await ctx.app.services.agents.list(pool.id, { page: toPageRequest(page), ...(lastPingSince === undefined ? {} : { lastPingSince }) });
      const document = ctx.app.jsonapi.collection(TYPE, result.items.map(toData), { url: ctx.url, pagination: { ...page, total: result.total } });
      return { status: 200, document };
    },
  },
  {
    method: "GET",
    path: "/agents/:agent_id",
    auth: "principal",
    async handle(ctx) {
      const agent = await ctx.app.services.agents.get(ctx.params.agent_id!);
      await ctx.authorize({ organization: agent.organization });
      return { status: 200, document: ctx.app.jsonapi.resource(TYPE, toData(agent)) };
    },
  },
  {
    // decision D46, as HCP Terraform: an agent that is unknown, errored or exited; 409 while it runs.
    method: "DELETE",
    path: "/agents/:agent_id",
    auth: "principal",
    async handle(ctx) {
      const agent = await ctx.app.services.agents.get(ctx.params.agent_id!);
      await ctx.authorize({ organization: agent.organization });
      await ctx.app.services.agents.remove(agent.id);
      return { status: 204 };
    },
  },
];
