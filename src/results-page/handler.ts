import { RETRY_AFTER_SECONDS } from "../errors.js";
import type { Authenticate } from "../http/handler.js";
import { createConsoleLogger, failureFrames, type Logger } from "../logger.js";
import { isStorageUnavailableError } from "../storage/unavailable.js";
import { messagePage } from "./layout.js";
import { page } from "./responses.js";
import { createRouter } from "./router.js";
import { inAuditRequest } from "../services/audit-request.js";
import type { Connection } from "../http/client-address.js";
import { createSignIn, DEFAULT_SESSION_LIFETIME_MS } from "./sign-in.js";
import type { ResultsPageSource } from "./types.js";

export { CONTENT_SECURITY_POLICY } from "./responses.js";

/** Options of {@link createResultsPage}. */
export interface ResultsPageOptions {
  /** Path the page is mounted under, e.g. `/app`. Default `""`. */
  prefix?: string;
  /**
   * Replaces the page's own authentication: resolves the caller of a page request, `null` answers
   * 401. Use it when the host already has sessions. Default: the `runplane_token` cookie set by the
   * sign-in form, which holds a session (`runplane.auth.sessions`), else the request as is
   * (an `Authorization: Bearer` header) checked with the runplane instance's API authenticator.
   */
  authenticate?: Authenticate;
  /** Serve the sign-in form (`<prefix>/login`) and sign-out. Default: true unless `authenticate` is given. */
  login?: boolean;
  /** How long a sign-in lasts, in milliseconds, however busy the person is. Default 8 hours. */
  sessionLifetimeMs?: number;
  /** Outcomes loaded per result, most severe first. Default 500. */
  maxOutcomesPerResult?: number;
  /** Mark the cookie `Secure`. Default: when the request URL is https. */
  secureCookie?: boolean;
  /** Where unexpected errors are logged. Default: JSON lines on stderr. */
  logger?: Logger;
}

function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, "");
  if (trimmed !== "" && !trimmed.startsWith("/")) throw new Error("prefix must start with /");
  return trimmed;
}

/**
 * The run task results page for people, server-rendered HTML (no scripts, inline CSS), authorized
 * like the API (`runs:read` on the run's workspace, D4, D21): `GET <prefix>/runs/:run_id`, and the
 * paths of the run task request's links (D25), `<prefix>/:organization/:workspace/runs/:run_id`
 * and the workspace's page `<prefix>/:organization/:workspace` (its runs, newest first, paged).
 * The home `<prefix>/` and `<prefix>/:organization` list the workspaces the caller may read and
 * their recent runs. A failing integration is worded on the run page and marked in
 * the runs lists, and `POST <prefix>/runs/:run_id/results/:result_id/retry` is its "Retry now" (D31).
 */
export function createResultsPage(source: ResultsPageSource, options: ResultsPageOptions = {}) {
  const prefix = normalizePrefix(options.prefix ?? "");
  const login = options.login ?? options.authenticate === undefined;
  const logger = options.logger ?? createConsoleLogger();
  const lifetimeMs = options.sessionLifetimeMs ?? DEFAULT_SESSION_LIFETIME_MS;
  const signIn = createSignIn(source, { login, authenticate: options.authenticate, lifetimeMs });
  const secure = (url: URL): boolean => options.secureCookie ?? url.protocol === "https:";
  const route = createRouter({ source, prefix, login, maxOutcomes: options.maxOutcomesPerResult ?? 500, signIn, secure });

  // decision D53: sign-ins and sign-outs are recorded with the request's id and client address.
  return (request: Request, connection?: Connection): Promise<Response> =>
    inAuditRequest(request, source.clientAddress?.(request, connection) ?? null, () => resultsPage(request));

  async function resultsPage(request: Request): Promise<Response> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return page(400, "Bad request");
    }
    try {
      const response = await route(request, url);
      return request.method === "HEAD" ? new Response(null, { status: response.status, headers: response.headers }) : response;
    } catch (error) {
      if (isStorageUnavailableError(error)) {
        // decision D28: the storage is away, not broken; the browser may retry after Retry-After.
        logger.warn("storage unavailable", { path: url.pathname, reason: error.reason });
        const body = messagePage({ prefix, login, signedIn: false }, "Temporarily unavailable", "The results cannot be read right now. Try again in a few seconds.");
        return page(503, body, { "retry-after": String(RETRY_AFTER_SECONDS) });
      }
      logger.error("results page failed", { path: url.pathname, error: error instanceof Error ? error.name : typeof error });
      logger.debug("results page failure detail", { stack: failureFrames(error) });
      return page(500, messagePage({ prefix, login, signedIn: false }, "Something went wrong", "The page could not be shown. Try again later."));
    }
  }
}
