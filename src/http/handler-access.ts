import { sha256Hex } from "../crypto/random.js";
import type { Principal } from "../schemas/common.js";
import type { AuthorizationTarget } from "../services/authorizer.js";
import { bearerToken } from "../services/principals.js";
import { DIRECTORY_SCOPE, type RevisionStore } from "../storage/revisions.js";
import type { AccessCache } from "./access-cache.js";
import type { ReadCache } from "./read-cache.js";
import type { RouteAction } from "./route-permissions.js";
import type { HttpApp, Route } from "./types.js";

/**
 * What the handler remembers between requests (the read cache, and a token's principal and
 * authorization answers while the directory stands) and how it authenticates and authorizes.
 */

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
export interface AccessStamp {
  digest: string;
  directory: number;
}

/** Where a cacheable GET stores its answer: the key and the revisions read before any data. */
export interface CacheSlot {
  key: string;
  stamp: string;
  access: AccessStamp;
}

const targetKey = (action: string, t: AuthorizationTarget): string => JSON.stringify([action, t.organization, t.projectId ?? null, t.workspaceId ?? null]);

export function createHandlerAccess(app: HttpApp, authenticate: Authenticate, caching?: HandlerCaching) {
  return {
    /**
     * The revisions are read before the route reads anything, so an entry is never newer than its
     * stamp claims: a write racing the render leaves a stamp that no later request will match.
     */
    async cacheSlot(route: Route, params: Record<string, string>, request: Request, url: URL): Promise<CacheSlot | null> {
      if (!caching || !route.cacheScopes || route.auth !== "principal") return null;
      const token = bearerToken(request);
      if (token === null) return null;
      const revisions = await caching.revisions.read([DIRECTORY_SCOPE, ...route.cacheScopes(params)]);
      const digest = sha256Hex(token);
      return { key: `${digest} ${url.pathname}${url.search}`, stamp: revisions.join(","), access: { digest, directory: revisions[0]! } };
    },

    cached: (slot: CacheSlot | null): Uint8Array<ArrayBuffer> | undefined => (slot ? caching!.cache.get(slot.key, slot.stamp) : undefined),

    store(slot: CacheSlot | null, status: number, body: string): void {
      if (slot && status === 200) caching!.cache.set(slot.key, slot.stamp, body);
    },

    /** The directory revision, read before anything the principal is computed from (null without caching or a bearer token). */
    async accessStamp(request: Request): Promise<AccessStamp | null> {
      const token = caching ? bearerToken(request) : null;
      if (token === null) return null;
      const [directory] = await caching!.revisions.read([DIRECTORY_SCOPE]);
      return { digest: sha256Hex(token), directory: directory! };
    },

    /** The request's principal: remembered for its token while the directory stands, else authenticated. */
    async principalOf(request: Request, access: AccessStamp | null): Promise<Principal | null> {
      const key = access && `principal ${access.digest}`;
      const known = key ? caching!.access.get<Principal>(key, access!.directory) : undefined;
      if (known) return known;
      const principal = await authenticate(request);
      if (principal && key) caching!.access.set(key, access!.directory, principal);
      return principal;
    },

    /** decision D21 through the authorizer, its answer remembered for the token while the directory stands. */
    async allowed(principal: Principal, action: RouteAction, target: AuthorizationTarget, access: AccessStamp | null): Promise<boolean> {
      const key = access && `${access.digest} ${targetKey(action, target)}`;
      const known = key ? caching!.access.get<boolean>(key, access!.directory) : undefined;
      if (known !== undefined) return known;
      const answer = await app.authorizer(principal, action, target);
      if (key) caching!.access.set(key, access!.directory, answer);
      return answer;
    },
  };
}
export type HandlerAccess = ReturnType<typeof createHandlerAccess>;
