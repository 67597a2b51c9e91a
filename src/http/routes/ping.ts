import type { Route } from "../types.js";

/** `GET /ping`: a liveness probe for load balancers and the reference server. */
export const pingRoutes: Route[] = [{ method: "GET", path: "/ping", auth: "none", handle: async () => ({ status: 204 }) }];
