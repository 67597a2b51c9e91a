import { sha256Hex } from "../crypto/random.js";
import { ApiError, RETRY_AFTER_SECONDS, toApiError } from "../errors.js";
import type { Principal } from "../schemas/common.js";
import { bearerToken } from "../services/principals.js";
import { DIRECTORY_SCOPE, type RevisionStore } from "../storage/revisions.js";
import { isStorageUnavailableError } from "../storage/unavailable.js";
import { BodyAbortedError, readJsonBody } from "./body.js";
import { errorDocument, MEDIA_TYPE, type JsonApiDocument } from "./jsonapi.js";
import { linkUrl } from "./links.js";
import { parseQuery } from "./query.js";
import { ROUTE_PERMISSIONS } from "./route-permissions.js";
import type { ReadCache } from "./read-cache.js";
import type { AccessCache } from "./access-cache.js";
import type { AuthorizationTarget } from "../services/authorizer.js";
import { createRequestTelemetry, type RequestLabels } from "./request-telemetry.js";
import type { Admission, RateLimit } from "./rate-limit.js";
import { createRouter } from "./router.js";
import { routeKey, type HttpApp, type Route, type RouteContext, type RouteResult } from "./types.js";
import type { RouteAction } from "./route-permissions.js";
import { failureFrames } from "../logger.js";
import { redactLogCapabilities } from "../domain/log-capability.js";

export type Authenticate = (request: Request) => Promise<Principal | null>;

/**
 * The read cache and what validates it. Only valid with the default bearer-token authenticator: an
 * entry is keyed by the token's digest, which is all that authenticator reads of a request.
 */
export interface HandlerCaching {
  cache: ReadCache;
  revisions: RevisionStore;
  /** Principals and authorization decisions for one directory revision (src/http/access-cache.ts). */
  access: AccessCache;
}

/** Where a request's token stands in the access cache: its digest and the directory revision read first. */
interface AccessStamp {
  digest: string;
  directory: number;
}

const targetKey = (action: string, t: AuthorizationTarget): string => JSON.stringify([action, t.organization, t.projectId ?? null, t.workspaceId ?? null]);

const jsonText = (status: number, body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}): Response =>
  new Response(body, { status, headers: { "content-type": MEDIA_TYPE, ...headers } });
const json = (status: number, document: JsonApiDocument, headers: Record<string, string> = {}): Response =>
  jsonText(status, JSON.stringify(document), headers);

/** Every route must have an entry in the route-permission table (D21); a missing one is a bug. */
export function assertRoutePermissions(routes: readonly Route[]): void {
  const missing = routes.filter((r) => !(routeKey(r) in ROUTE_PERMISSIONS)).map(routeKey);
  if (missing.length > 0) throw new Error(`routes without a permission entry: ${missing.join(", ")}`);
}

/**
 * The one Web-standard entry point: `(Request) => Promise<Response>`. Every framework mount is a shim
 * around it. Errors become JSON:API error documents; a storage that cannot be reached is a 503 with
 * `Retry-After` (D28); anything unexpected is logged (without request contents) and answered with a
 * bare 500 (D5).
 */
export function createHandler(app: HttpApp, routes: readonly Route[], authenticate: Authenticate, caching?: HandlerCaching, rateLimit?: RateLimit) {
  assertRoutePermissions(routes);
  const router = createRouter(routes);

  /** Where a cacheable GET stores its answer: the key and the revisions read before any data. */
  interface CacheSlot {
    key: string;
    stamp: string;
    access: AccessStamp;
  }

  const toResponse = (result: RouteResult, slot: CacheSlot | null): Response => {
    if ("response" in result) return result.response;
    if ("text" in result) return new Response(result.text, { status: result.status, headers: { "content-type": result.contentType } });
    if (result.document === undefined) return new Response(null, { status: result.status });
    const body = JSON.stringify(result.document);
    if (slot && result.status === 200) caching!.cache.set(slot.key, slot.stamp, body);
    return jsonText(result.status, body);
  };

  /**
   * The revisions are read before the route reads anything, so an entry is never newer than its
   * stamp claims: a write racing the render leaves a stamp that no later request will match.
   */
  const cacheSlot = async (route: Route, params: Record<string, string>, request: Request, url: URL): Promise<CacheSlot | null> => {
    if (!caching || !route.cacheScopes || route.auth !== "principal") return null;
    const token = bearerToken(request);
    if (token === null) return null;
    const revisions = await caching.revisions.read([DIRECTORY_SCOPE, ...route.cacheScopes(params)]);
    const digest = sha256Hex(token);
    return { key: `${digest} ${url.pathname}${url.search}`, stamp: revisions.join(","), access: { digest, directory: revisions[0]! } };
  };

  /** The directory revision, read before anything the principal is computed from (null without caching or a bearer token). */
  const accessStamp = async (request: Request): Promise<AccessStamp | null> => {
    const token = caching ? bearerToken(request) : null;
    if (token === null) return null;
    const [directory] = await caching!.revisions.read([DIRECTORY_SCOPE]);
    return { digest: sha256Hex(token), directory: directory! };
  };

  /** The request's principal: remembered for its token while the directory stands, else authenticated. */
  const principalOf = async (request: Request, access: AccessStamp | null): Promise<Principal | null> => {
    const key = access && `principal ${access.digest}`;
    const known = key ? caching!.access.get<Principal>(key, access!.directory) : undefined;
    if (known) return known;
    const principal = await authenticate(request);
    if (principal && key) caching!.access.set(key, access!.directory, principal);
    return principal;
  };

  /** decision D21 through the authorizer, its answer remembered for the token while the directory stands. */
  const allowed = async (principal: Principal, action: RouteAction, target: AuthorizationTarget, access: AccessStamp | null): Promise<boolean> => {
    const key = access && `${access.digest} ${targetKey(action, target)}`;
    const known = key ? caching!.access.get<boolean>(key, access!.directory) : undefined;
    if (known !== undefined) return known;
    const answer = await app.authorizer(principal, action, target);
    if (key) caching!.access.set(key, access!.directory, answer);
    return answer;
  };

  const observe = createRequestTelemetry();
  return (request: Request): Promise<Response> =>
    observe(request, async (req, labels) => {
      const quota: Quota = {};
      const response = await serve(req, labels, quota);
      if (!quota.admission) return response;
      quota.admission.answered(response.status);
      return withHeaders(response, quota.admission.headers);
    });

  async function serve(request: Request, labels: RequestLabels, quota: Quota): Promise<Response> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return json(400, errorDocument(new ApiError("bad-request", { detail: "Invalid request URL" })));
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
      const { route, params } = match;
      labels.route = `${route.method} ${route.path}`;
      const action = ROUTE_PERMISSIONS[routeKey(route)]!;

      const slot = method === "GET" ? await cacheSlot(route, params, request, url) : null;
      const cached = slot ? caching!.cache.get(slot.key, slot.stamp) : undefined;
      if (cached !== undefined) {
        return request.method === "HEAD" ? new Response(null, { status: 200, headers: { "content-type": MEDIA_TYPE } }) : jsonText(200, cached);
      }

      let principal: Principal | null = null;
      const access = route.auth !== "principal" ? null : slot ? slot.access : await accessStamp(request);
      if (route.auth === "principal") {
        principal = await principalOf(request, access);
        // decision D4: 401 only for a missing or invalid credential.
        if (!principal) throw new ApiError("unauthorized");
      }
      // decision D30: the whole query is validated before the body is read and the route runs.
      const query = parseQuery(route.query, url.searchParams);
      const hasBody = request.method === "POST" || request.method === "PATCH";
      let reading: Promise<unknown> | undefined;
      const readBody = (): Promise<unknown> => (reading ??= hasBody ? readJsonBody(request, route.bodyLimit) : Promise.resolve(undefined));
      const body = route.deferBody ? undefined : await readBody();
      const ctx: RouteContext = {
        request,
        url: linkUrl(app, route, params, query),
        params,
        query,
        principal: principal as Principal,
        body,
        readBody,
        app,
        async authenticate() {
          principal = await authenticate(request);
          if (!principal) throw new ApiError("unauthorized");
          return principal;
        },
        async authorize(target) {
          // decision D4: a valid credential without the permission gets 404, like a missing object.
          if (!principal || !(await allowed(principal, action, target, access))) throw new ApiError("not-found");
        },
      };
      const response = toResponse(await route.handle(ctx), slot);
      if (request.method !== "HEAD") return response;
      // A streamed artifact (D24) is not read for a HEAD: let its source go.
      await response.body?.cancel().catch(() => undefined);
      return new Response(null, { status: response.status, headers: response.headers });
    } catch (error) {
      const apiError = toApiError(error);
      // decision D32: a `log-read-url` path carries its credential; log lines never do.
      const loggedPath = redactLogCapabilities(url.pathname);
      // decision D26: a client that gives up on its upload is routine, not a server fault.
      if (error instanceof BodyAbortedError) app.logger.debug("request body aborted", { method: request.method, path: loggedPath });
      if (apiError.code === "unavailable") {
        // decision D28: the storage is away, not broken: a warning, and a 503 the client retries.
        const reason = isStorageUnavailableError(error) ? error.reason : "unavailable";
        app.logger.warn("storage unavailable", { method: request.method, path: loggedPath, reason });
        return json(apiError.status, errorDocument(apiError), { "retry-after": String(RETRY_AFTER_SECONDS) });
      }
      if (apiError.status >= 500) {
        app.logger.error("request failed", {
          method: request.method,
          path: loggedPath,
          error: error instanceof Error ? error.name : typeof error,
        });
        // The stack helps the host's developers; it goes to debug only and never into a response.
        app.logger.debug("request failure detail", { stack: failureFrames(error) });
      }
      return json(apiError.status, errorDocument(apiError), { ...apiError.headers });
    }
  }
}

/** decision D33: a request once counted: the rate-limit headers its answer carries, and what its answer proves. */
interface Quota {
  admission?: Admission;
}

function withHeaders(response: Response, headers: Record<string, string>): Response {
  const set = (r: Response): Response => (Object.entries(headers).forEach(([name, value]) => r.headers.set(name, value)), r);
  try {
    return set(response);
  } catch {
    // A route's own Response may have immutable headers (one passed on from fetch): a copy has not.
    return set(new Response(response.body, response));
  }
}
