import type { JsonApiDocument } from "../jsonapi.js";
import type { Route } from "../types.js";
import { readableRun } from "./artifacts.js";
import { runResourceOf } from "./run-read-support.js";
import { configurationVersionResource, ingressAttributesResource } from "./run-includes.js";

/**
 * decision D49: `GET /configuration-versions/:id` (go-tfe's `ConfigurationVersions.Read`). runplane
 * knows a configuration version through the runs that name it: the newest one the caller may read
 * (`runs:read`, D21) answers, written as the run's `include=configuration_version` writes it;
 * none readable is 404 (D4). Its download is D24's route.
 */

/** decision D8: go-tfe's `ConfigVerIncludeOpt`, both spellings. */
export const CONFIGURATION_VERSION_INCLUDES = { ingress_attributes: "ingress-attributes", "ingress-attributes": "ingress-attributes", run: "run" } as const;

export const configurationVersionRoutes: Route[] = [
  {
    method: "GET",
    path: "/configuration-versions/:configuration_version_id",
    auth: "custom",
    query: { include: CONFIGURATION_VERSION_INCLUDES },
    async handle(ctx) {
      const run = await readableRun(ctx, "configuration-version", ctx.params.configuration_version_id!, false);
      const data = configurationVersionResource(ctx, run);
      if (ctx.query.includes.size === 0) return { status: 200, document: { data } };
      const included: JsonApiDocument[] = [];
      const ingress = ctx.query.includes.has("ingress-attributes") ? ingressAttributesResource(ctx, run) : null;
      if (ingress) included.push(ingress);
      if (ctx.query.includes.has("run")) included.push((await runResourceOf(ctx, run)).data);
      return { status: 200, document: { data, included } };
    },
  },
];
