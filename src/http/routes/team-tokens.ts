import { notFound } from "../../errors.js";
import type { ApiTokenView } from "../../services/directory.js";
import { sessionOf } from "../../services/principals.js";
import { toPageRequest } from "../pagination.js";
import type { Route, RouteContext } from "../types.js";

const TYPE = "authentication-tokens";

/**
 * An API token as HCP Terraform shows a team token
 * (https://developer.hashicorp.com/terraform/cloud-docs/api-docs/team-tokens): the agent token
 * resource's shape, `token` always null (the secret is never shown again, D11), the team linked,
 * `expired-at` null (API tokens here do not expire; a results page session's end) and `created-by`
 * null (not recorded).
 */
export const apiTokenData = (view: ApiTokenView) => ({
  id: view.id,
  description: view.description,
  createdAt: view.createdAt,
  lastUsedAt: view.lastUsedAt,
  token: null,
  // A results page session ends; an API token does not.
  expiredAt: sessionOf(view)?.expiresAt ?? null,
  team: view.teamId,
  createdBy: null,
  createdByType: "users",
});

/**
 * The API token `id` when the caller may manage it (owners of its organization, D21),
 * null when no API token has that id. Another organization's token, or a caller short of owners,
 * is 404 like a missing one (D4), so nothing tells whether it exists.
 */
export async function loadApiToken(ctx: RouteContext, id: string): Promise<ApiTokenView | null> {
  const view = await ctx.app.services.directory.getApiToken(id);
  if (!view) return null;
  if (!(await ctx.app.authorizer(ctx.principal, "api-tokens:manage", { organization: view.organization }))) throw notFound();
  return view;
}

/** A team's API tokens, metadata only; show and revoke are `/authentication-tokens/:id`. */
export const teamTokenRoutes: Route[] = [
  {
    method: "GET",
    path: "/teams/:team_id/authentication-tokens",
    auth: "principal",
    query: { page: "always" },
    async handle(ctx) {
      const team = await ctx.app.services.directory.teams.get(ctx.params.team_id!);
      if (!team) throw notFound();
      await ctx.authorize({ organization: team.organization });
      const page = ctx.query.page!;
      const filter = { organization: team.organization, teamId: team.id };
      const result = await ctx.app.services.directory.listApiTokens(filter, toPageRequest(page));
      const document = ctx.app.jsonapi.collection(TYPE, result.items.map(apiTokenData), {
        url: ctx.url,
        pagination: { ...page, total: result.total },
      });
      return { status: 200, document };
    },
  },
];
