import type { Connection } from "./client-address.js";
import type { Logger } from "../logger.js";
import type { Telemetry } from "../telemetry/providers.js";
import type { ArtifactProviders } from "./artifact-body.js";
import type { RunProviders } from "./run-providers.js";
import type { Dialect, Principal } from "../schemas/common.js";
import type { Services } from "../services/index.js";
import type { JsonApi, JsonApiDocument } from "./jsonapi.js";
import type { QuerySpec, RouteQuery } from "./query.js";
import type { RouteAction } from "./route-permissions.js";

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

/** The resource an action is checked against: its organization and, where scoped, project/workspace. */
export interface AuthTarget {
  organization: string;
  projectId?: string;
  workspaceId?: string;
}

/** Decides whether `principal` may perform `action` on `target` (D21). */
export type Authorizer = (principal: Principal, action: RouteAction, target: AuthTarget) => Promise<boolean>;

/** What routes are built from: services, the JSON:API writer, and request-independent options. */
export interface HttpApp {
  basePath: string;
  dialect: Dialect;
  jsonapi: JsonApi;
  services: Services;
  authorizer: Authorizer;
  logger: Logger;
  /** decision D50: where request metrics and spans go; the global providers, followed, when absent. */
  telemetry?: Telemetry;
  /** decision D24: the host's plan JSON and configuration version providers, and its logs. */
  artifacts?: ArtifactProviders;
  /** What only the host knows of its runs (status, plan and apply, policy checks). */
  runs?: RunProviders;
  /** decision D62: the client's address of a request, as option `trustProxy` says to read it. */
  clientAddress(request: Request, connection?: Connection): string | null;
}

export interface RouteContext {
  request: Request;
  /**
   * The URL the links of the response are built on (src/http/links.ts, D7): the configured public
   * origin and the route's path, never the Host header. Parameters are read from `query`.
   */
  url: URL;
  params: Record<string, string>;
  /** The query the route declared, validated before `handle` runs (D30); the raw one is not offered. */
  query: RouteQuery;
  /** Set on every route whose auth is `principal`. */
  principal: Principal;
  /** Parsed JSON body (POST/PATCH), or undefined when empty; undefined on a `deferBody` route. */
  body: unknown;
  /**
   * Reads and parses the body (D6 limits, the route's `bodyLimit`) once; later calls resolve the
   * same value. What a `deferBody` route calls once it has authenticated the request.
   */
  readBody(): Promise<unknown>;
  app: HttpApp;
  /**
   * For `custom` routes: authenticates the request with the API authenticator (401 when it finds
   * no caller) and makes the caller the one `authorize` checks.
   */
  authenticate(): Promise<Principal>;
  /** Checks this route's action (from the route-permission table) on `target`; 404 when denied (D4). */
  authorize(target: AuthTarget): Promise<void>;
}

export type RouteResult =
  | { status: number; document?: JsonApiDocument }
  | { status: number; text: string; contentType: string }
  /** A response the route built itself (artifact bytes, D24), passed on as it is. */
  | { response: Response };

export interface Route {
  method: HttpMethod;
  /** Path below the base path, with `:param` segments, e.g. `/workspaces/:workspace_id/vars`. */
  path: string;
  /** `principal`: authenticate with the API authenticator; `none`: public; `custom`: the route authenticates itself. */
  auth: "principal" | "none" | "custom";
  /** Body limit in bytes (D6); default 1 MiB. */
  bodyLimit?: number;
  /** The query parameters the route accepts; the router refuses a bad one before `handle` (D30). */
  query?: QuerySpec;
  /**
   * The handler does not read the body before `handle`: the route calls `ctx.readBody()` after
   * its own credential check, so an unauthenticated request never makes the server buffer a body
   * (D26). Only for `custom` routes (a `principal` route is authenticated before any body read).
   */
  deferBody?: boolean;
  /**
   * GET routes whose 200 body depends only on the directory and the storage revision scopes named
   * here (src/storage/revisions.ts) may be served from the read cache while those stand still.
   */
  cacheScopes?: (params: Record<string, string>) => readonly string[];
  handle(ctx: RouteContext): Promise<RouteResult>;
}

export const routeKey = (route: Pick<Route, "method" | "path">): string => `${route.method} ${route.path}`;
