import { notFound } from "../../errors.js";
import type { PolicySet } from "../../schemas/directory.js";
import type { PolicySetParameterCreate, PolicySetParameterUpdate, VariableView } from "../../schemas/variables.js";
import { readResourceBody } from "../documents.js";
import type { ResourceDefinition } from "../jsonapi.js";
import { PolicySetParameterAttributes } from "../../schemas/wire.js";
import { toPageRequest } from "../pagination.js";
import type { Route, RouteContext } from "../types.js";

const SCHEMA = "policy-set-parameter";

/** Policy set parameters, spec 4.4: type `vars`, `configurable` pointing at the policy set (D12). */
export const policySetParameterResource = (basePath: string): ResourceDefinition => ({
  type: "vars",
  schema: SCHEMA,
  attributes: PolicySetParameterAttributes,
  self: (d) => `${basePath}/policy-sets/${String(d.configurable)}/parameters/${String(d.id)}`,
  relationships: {
    configurable: { type: "policy-sets", related: (d) => `${basePath}/policy-sets/${String(d.configurable)}` },
  },
});

const toData = (policySet: PolicySet, v: VariableView) => ({ ...v, configurable: policySet.id });

async function loadPolicySet(ctx: RouteContext): Promise<PolicySet> {
  const policySet = await ctx.app.services.directory.policySets.get(ctx.params.policy_set_id!);
  if (!policySet) throw notFound();
  await ctx.authorize({ organization: policySet.organization });
  return policySet;
}

export const policySetParameterRoutes: Route[] = [
  {
    method: "GET",
    path: "/policy-sets/:policy_set_id/parameters",
    auth: "principal",
    // decision D7: not paginated unless a page parameter is given.
    query: { page: "optional" },
    async handle(ctx) {
      const policySet = await loadPolicySet(ctx);
      const page = ctx.query.page;
      const result = await ctx.app.services.policySetParameters.list(policySet.id, page ? toPageRequest(page) : undefined);
      const items = result.items.map((v) => toData(policySet, v));
      const options = page ? { url: ctx.url, pagination: { ...page, total: result.total } } : {};
      return { status: 200, document: ctx.app.jsonapi.collection("vars", items, options, SCHEMA) };
    },
  },
  {
    method: "GET",
    path: "/policy-sets/:policy_set_id/parameters/:parameter_id",
    auth: "principal",
    async handle(ctx) {
      const policySet = await loadPolicySet(ctx);
      const v = await ctx.app.services.policySetParameters.get(policySet.id, ctx.params.parameter_id!);
      return { status: 200, document: ctx.app.jsonapi.resource("vars", toData(policySet, v), SCHEMA) };
    },
  },
  {
    method: "POST",
    path: "/policy-sets/:policy_set_id/parameters",
    auth: "principal",
    async handle(ctx) {
      const policySet = await loadPolicySet(ctx);
      const body = readResourceBody(ctx.body, ["vars"]);
      // The service validates the attributes with zod; the cast only names the expected shape.
      const v = await ctx.app.services.policySetParameters.create(policySet.id, body.attributes as PolicySetParameterCreate);
      return { status: 201, document: ctx.app.jsonapi.resource("vars", toData(policySet, v), SCHEMA) };
    },
  },
  {
    method: "PATCH",
    path: "/policy-sets/:policy_set_id/parameters/:parameter_id",
    auth: "principal",
    async handle(ctx) {
      const policySet = await loadPolicySet(ctx);
      const body = readResourceBody(ctx.body, ["vars"], ctx.params.parameter_id);
      const v = await ctx.app.services.policySetParameters.update(
        policySet.id,
        ctx.params.parameter_id!,
        body.attributes as PolicySetParameterUpdate,
      );
      return { status: 200, document: ctx.app.jsonapi.resource("vars", toData(policySet, v), SCHEMA) };
    },
  },
  {
    method: "DELETE",
    path: "/policy-sets/:policy_set_id/parameters/:parameter_id",
    auth: "principal",
    async handle(ctx) {
      const policySet = await loadPolicySet(ctx);
      await ctx.app.services.policySetParameters.delete(policySet.id, ctx.params.parameter_id!);
      return { status: 204 };
    },
  },
];
