import { ApiError } from "../errors.js";
import { actorOfPrincipal, currentAuditRequest, inAuditRequest, noteAuditActor } from "../services/audit-request.js";
import type { Connection } from "./client-address.js";
import type { Principal } from "../schemas/common.js";
import { readJsonBody } from "./body.js";
import { createHandlerAccess, type AccessStamp, type Authenticate, type CacheSlot, type HandlerAccess, type HandlerCaching } from "./handler-access.js";
import { badUrl, errorAnswer, json, jsonText, withHeaders } from "./handler-answers.js";
import { errorDocument, MEDIA_TYPE } from "./jsonapi.js";
import { linkUrl } from "./links.js";
import { parseQuery, type RouteQuery } from "./query.js";
import type { Admission, RateLimit } from "./rate-limit.js";
import { createRequestTelemetry, type RequestLabels } from "./request-telemetry.js";
import { ROUTE_PERMISSIONS, type RouteAction } from "./route-permissions.js";
import { createRouter } from "./router.js";
import { withRequestDeadline } from "../storage/request-deadline.js";
import { routeKey, type HttpApp, type Route, type RouteContext, type RouteResult } from "./types.js";

export type { Authenticate, HandlerCaching } from "./handler-access.js";

/** Every route must have an entry in the route-permission table (D21); a missing one is a bug. */
export function assertRoutePermissions(routes: readonly Route[]): void {
  const missing = routes.filter((r) => !(routeKey(r) in ROUTE_PERMISSIONS)).map(routeKey);
  if (missing.length > 0) throw new Error(`routes without a permission entry: ${missing.join(", ")}`);
}

/** decision D33: a request once counted: the rate-limit headers its answer carries, and what its answer proves. */
interface Quota {
  admission?: Admission;
}

/** What one matched request carries through the handler. */
interface Matched {
  request: Request;
  url: URL;
  route: Route;
  params: Record<string, string>;
}

/**
 * The one Web-standard entry point: `(Request) => Promise<Response>`. Every framework mount is a shim
 * around it. Errors become JSON:API error documents (src/http/handler-answers.ts).
 */
export function createHandler(app: HttpApp, routes: readonly Route[], authenticate: Authenticate, caching?: HandlerCaching, rateLimit?: RateLimit) {
  assertRoutePermissions(routes);
  const router = createRouter(routes);
  const access = createHandlerAccess(app, authenticate, caching);
  const observe = createRequestTelemetry(app.telemetry);
  const run = createRouteRunner(app, access, authenticate);

  async function serve(request: Request, labels: RequestLabels, quota: Quota): Promise<Response> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return badUrl();
    }
    try {
      const path = url.pathname;
      const inside = path === app.basePath || path.startsWith(`${app.basePath}/`);
      // HEAD is answered as GET without a body (load balancers probe with it).
      const method = request.method === "HEAD" ? "GET" : request.method;
      const match = inside ? router.match(method, path.slice(app.basePath.length)) : ({ kind: "not-found" } as const);
      // decision D33: counted before anything is read, a cached answer and an unknown path included.
      if (rateLimit) quota.admission = rateLimit.admit(request, match.kind === "found" ? match.route : null, match.kind === "found" ? match.params : {}, url);
      if (match.kind === "not-found") throw new ApiError("not-found");
      if (match.kind === "method-not-allowed") {
        const error = new ApiError("method-not-allowed", { detail: `Allowed: ${match.allowed.join(", ")}` });
        return json(error.status, errorDocument(error), { allow: match.allowed.join(", ") });
      }
      labels.route = `${match.route.method} ${match.route.path}`;
      return await run({ request, url, route: match.route, params: match.params });
    } catch (error) {
      return errorAnswer(app, request, url, error);
    }
  }

  // decision D53: every request's writes are recorded with its id, client address and actor.
  return (request: Request, connection?: Connection): Promise<Response> =>
    inAuditRequest(request, app.clientAddress(request, connection), () => observe(request, async (req, labels) => {
      const quota: Quota = {};
      // decision D39: the storage work of one request shares one deadline.
      const response = await withRequestDeadline(() => serve(req, labels, quota));
      // The id the audit trail records for this request, so a client can find its events (D53).
      const id = { "x-request-id": currentAuditRequest()?.requestId ?? "" };
      if (!quota.admission) return withHeaders(response, id);
      quota.admission.answered(response.status);
      return withHeaders(response, { ...quota.admission.headers, ...id });
    }));
}

/** Runs a matched route: the read cache, authentication, the query and body (D30), then the route itself. */
function createRouteRunner(app: HttpApp, access: HandlerAccess, authenticate: Authenticate) {
  const toResponse = (result: RouteResult, slot: CacheSlot | null): Response => {
    if ("response" in result) return result.response;
    if ("text" in result) return new Response(result.text, { status: result.status, headers: { "content-type": result.contentType } });
    if (result.document === undefined) return new Response(null, { status: result.status });
    const body = JSON.stringify(result.document);
    access.store(slot, result.status, body);
    return jsonText(result.status, body);
  };

  return async (m: Matched): Promise<Response> => {
    const { request, route } = m;
    const slot = request.method === "GET" || request.method === "HEAD" ? await access.cacheSlot(route, m.params, request, m.url) : null;
    const cached = access.cached(slot);
    if (cached !== undefined) {
      return request.method === "HEAD" ? new Response(null, { status: 200, headers: { "content-type": MEDIA_TYPE } }) : jsonText(200, cached);
    }
    const stamp = route.auth !== "principal" ? null : slot ? slot.access : await access.accessStamp(request);
    let principal: Principal | null = null;
    if (route.auth === "principal") {
      principal = await access.principalOf(request, stamp);
      // decision D4: 401 only for a missing or invalid credential.
      if (!principal) throw new ApiError("unauthorized");
      noteAuditActor(actorOfPrincipal(principal), principal.organization);
    }
    // decision D30: the whole query is validated before the body is read and the route runs.
    const query = parseQuery(route.query, m.url.searchParams);
    const ctx = await routeContext(app, m, query, principal, stamp, { access, authenticate });
    const response = toResponse(await route.handle(ctx), slot);
    if (request.method !== "HEAD") return response;
    // A streamed artifact (D24) is not read for a HEAD: let its source go.
    await response.body?.cancel().catch(() => undefined);
    return new Response(null, { status: response.status, headers: response.headers });
  };
}

/** The route's view of its request: the validated query, the body (read once), and its auth checks. */
async function routeContext(
  app: HttpApp,
  m: Matched,
  query: RouteQuery,
  known: Principal | null,
  stamp: AccessStamp | null,
  auth: { access: HandlerAccess; authenticate: Authenticate },
): Promise<RouteContext> {
  const { request, route } = m;
  const action: RouteAction = ROUTE_PERMISSIONS[routeKey(route)]!;
  const hasBody = request.method === "POST" || request.method === "PATCH";
  let reading: Promise<unknown> | undefined;
  const readBody = (): Promise<unknown> => (reading ??= hasBody ? readJsonBody(request, route.bodyLimit) : Promise.resolve(undefined));
  const body = route.deferBody ? undefined : await readBody();
  let principal = known;
  return {
    request,
    url: linkUrl(app, route, m.params, query),
    params: m.params,
    query,
    principal: principal as Principal,
    body,
    readBody,
    app,
    async authenticate() {
      principal = await auth.authenticate(request);
      if (!principal) throw new ApiError("unauthorized");
      noteAuditActor(actorOfPrincipal(principal), principal.organization);
      return principal;
    },
    async authorize(target) {
      // decision D4: a valid credential without the permission gets 404, like a missing object.
      if (!principal || !(await auth.access.allowed(principal, action, target, stamp))) throw new ApiError("not-found");
    },
  };
}
