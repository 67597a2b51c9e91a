import type { Route } from "../types.js";

/**
 * The API version HCP Terraform sends in `TFP-API-Version` (seen on app.terraform.io in 2026;
 * docs/reference/rate-limits.md). go-tfe reads it from `GET /ping` when it builds a client and
 * returns it from `RemoteAPIVersion()`; the Terraform CLI wants at least 2.5 for a `cloud` block.
 */
export const TFP_API_VERSION = "2.6";

/**
 * `GET /ping`: a liveness probe for load balancers and the reference server, and what go-tfe asks
 * first: 204 with `TFP-API-Version` and, when rate limits are on, the caller's `X-RateLimit-*`
 * headers (decision D33), from which go-tfe builds its client-side limiter (none without them).
 */
export const pingRoutes: Route[] = [
  {
    method: "GET",
    path: "/ping",
    auth: "none",
    handle: async () => ({ response: new Response(null, { status: 204, headers: { "tfp-api-version": TFP_API_VERSION } }) }),
  },
];
