import { RETRY_AFTER_SECONDS } from "../errors.js";
import type { Authenticate } from "../http/handler.js";
import { createConsoleLogger, failureFrames, type Logger } from "../logger.js";
import { isStorageUnavailableError } from "../storage/unavailable.js";
import { loadRunPage, parseFilter } from "./data.js";
import { html } from "./escape.js";
import { layout, loginForm, messagePage, notFoundPage, unauthorizedPage, type Chrome } from "./layout.js";
import { clearedCookie, isCrossSite, isSameOriginPost, readCookie, readForm, safeNext, sessionCookie, withBearer } from "./login.js";
import { createSignIn, DEFAULT_SESSION_LIFETIME_MS, type Caller } from "./sign-in.js";
import { mayRetry, noticeOf, RETRY_PATH, retryResult } from "./retry-action.js";
import { runPage } from "./render.js";
import { loadOverview, mayReadRuns } from "./home.js";
import { homePage, organizationPage } from "./home-page.js";
import { findWorkspace, loadWorkspacePage, parsePageNumber, workspacePage } from "./workspace.js";
import { STYLES_HASH } from "./styles.js";
import type { Workspace } from "../schemas/directory.js";
import type { ResultsPageSource, RunTarget } from "./types.js";

/** Options of {@link createResultsPage}. */
export interface ResultsPageOptions {
  /** Path the page is mounted under, e.g. `/app`. Default `""`. */
  prefix?: string;
  /**
   * Replaces the page's own authentication: resolves the caller of a page request, `null` answers
   * 401. Use it when the host already has sessions. Default: the `runplane_token` cookie set by the
   * sign-in form, which holds a session (`runplane.auth.sessions`, issue 33.3), else the request as is
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

/** No scripts at all; the one stylesheet by its hash; forms only to this origin. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src ${STYLES_HASH}`,
  "img-src data:",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  // `same-origin` (not `no-referrer`): with no-referrer browsers send `Origin: null` on form posts.
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
} as const;

const page = (status: number, body: string, headers: Record<string, string> = {}): Response =>
  new Response(body, { status, headers: { ...SECURITY_HEADERS, ...headers } });
const redirect = (location: string, headers: Record<string, string> = {}): Response =>
  new Response(null, { status: 303, headers: { ...SECURITY_HEADERS, location, ...headers } });

function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, "");
  if (trimmed !== "" && !trimmed.startsWith("/")) throw new Error("prefix must start with /");
  return trimmed;
}

/** Paths of one segment that are never an organization's page. */
const RESERVED = new Set(["/runs", "/login", "/logout"]);

/** Path segments, decoded; null when one is not valid percent-encoding (answered 404). */
function decodeSegments(raw: readonly string[]): string[] | null {
  try {
    return raw.map((segment) => decodeURIComponent(segment));
  } catch {
    return null;
  }
}

/** Where the run was asked for by `run_app_url`'s path: the run must be of that workspace (D25). */
interface RunPlace {
  organization: string;
  workspaceName: string;
}

/**
 * The run task results page for people, server-rendered HTML (no scripts, inline CSS), authorized
 * like the API (`runs:read` on the run's workspace, D4, D21): `GET <prefix>/runs/:run_id`, and the
 * paths of the run task request's links (D25), `<prefix>/:organization/:workspace/runs/:run_id`
 * and the workspace's page `<prefix>/:organization/:workspace` (its runs, newest first, paged).
 * The home `<prefix>/` and `<prefix>/:organization` list the workspaces the caller may read and
 * their recent runs (issue 24.9). A failing integration is worded on the run page and marked in
 * the runs lists, and `POST <prefix>/runs/:run_id/results/:result_id/retry` is its "Retry now" (D31).
 */
export function createResultsPage(source: ResultsPageSource, options: ResultsPageOptions = {}) {
  const prefix = normalizePrefix(options.prefix ?? "");
  const login = options.login ?? options.authenticate === undefined;
  const maxOutcomes = options.maxOutcomesPerResult ?? 500;
  const logger = options.logger ?? createConsoleLogger();
  const lifetimeMs = options.sessionLifetimeMs ?? DEFAULT_SESSION_LIFETIME_MS;
  const signIn = createSignIn(source, { login, authenticate: options.authenticate, lifetimeMs });
  const identify = signIn.identify;

  function unauthorized(url: URL, chrome: Chrome, caller: Caller, next = `${url.pathname}${url.search}`): Response {
    // decision D4: 401 only for a missing or invalid credential; a stale cookie is cleared.
    const headers: Record<string, string> = { "www-authenticate": 'Bearer realm="runplane"' };
    if (caller.cookie) headers["set-cookie"] = clearedCookie(prefix, secure(url));
    const problem = caller.cookie ? "Your sign-in is no longer valid. Sign in again." : null;
    return page(401, unauthorizedPage({ ...chrome, signedIn: false }, next, problem), headers);
  }

  const targetOf = (organization: string, workspaceId: string, workspace: Workspace | null): RunTarget =>
    workspace ? { organization, workspaceId, projectId: workspace.projectId } : { organization, workspaceId };

  async function runRoute(url: URL, runId: string, place: RunPlace | null, chrome: Chrome, caller: Caller): Promise<Response> {
    if (!caller.principal) return unauthorized(url, chrome, caller);
    const run = await source.runTasks.getRun(runId);
    if (!run) return page(404, notFoundPage(chrome));
    const workspace = await source.directory.workspaces.get(run.workspaceId);
    // decision D4: no permission looks exactly like no run.
    if (!(await source.auth.authorize(caller.principal, "runs:read", targetOf(run.organization, run.workspaceId, workspace)))) {
      return page(404, notFoundPage(chrome));
    }
    // decision D25: a run asked for under another organization or workspace is not there.
    if (place && (run.organization !== place.organization || workspace?.name !== place.workspaceName)) return page(404, notFoundPage(chrome));
    const target = targetOf(run.organization, run.workspaceId, workspace);
    const extras = { mayRetry: await mayRetry(source, caller.principal, target), notice: noticeOf(url.searchParams) };
    const model = await loadRunPage(source, run, workspace, parseFilter(url.searchParams), maxOutcomes, extras);
    return page(200, runPage(chrome, model, place ? url.pathname : undefined));
  }

  async function workspaceRoute(url: URL, place: RunPlace, chrome: Chrome, caller: Caller): Promise<Response> {
    const principal = caller.principal;
    if (!principal) return unauthorized(url, chrome, caller);
    const pageNumber = parsePageNumber(url.searchParams);
    if (pageNumber === null) return page(400, messagePage(chrome, "Bad request", "The page number must be an integer from 1 to 1000000."));
    // decision D4: a workspace the caller may not read (runs:read) is not found, and its runs are never listed.
    const workspace = await findWorkspace(source, place.organization, place.workspaceName, (w) => mayReadRuns(source, principal, w));
    if (!workspace) return page(404, notFoundPage(chrome, "workspace"));
    return page(200, workspacePage(chrome, await loadWorkspacePage(source, workspace, pageNumber)));
  }

  /** The home: the caller's organization (a principal belongs to one), if it may read a workspace of it. */
  async function homeRoute(url: URL, chrome: Chrome, caller: Caller): Promise<Response> {
    if (!caller.principal) return unauthorized(url, chrome, caller);
    return page(200, homePage(chrome, await loadOverview(source, caller.principal, [caller.principal.organization])));
  }

  async function organizationRoute(url: URL, organization: string, chrome: Chrome, caller: Caller): Promise<Response> {
    if (!caller.principal) return unauthorized(url, chrome, caller);
    const { organizations, recent } = await loadOverview(source, caller.principal, [organization]);
    // decisions D4, D5a: an organization with no workspace the caller may read looks exactly like none.
    const shown = organizations[0];
    return shown ? page(200, organizationPage(chrome, shown, recent)) : page(404, notFoundPage(chrome, "organization"));
  }

  const secure = (url: URL): boolean => options.secureCookie ?? url.protocol === "https:";

  async function loginPost(request: Request, url: URL, chrome: Chrome): Promise<Response> {
    if (isCrossSite(request, url)) return page(403, messagePage(chrome, "Forbidden", "Sign in from this site's own form."));
    const form = await readForm(request);
    if (!form) return page(400, messagePage(chrome, "Bad request", "Send the sign-in form."));
    const next = safeNext(form.get("next"), prefix);
    const token = (form.get("token") ?? "").trim();
    const bearer = token === "" ? null : withBearer(request, token);
    // The API must accept the token (a host's own authenticator too), and it must be an API token
    // of runplane's directory: the cookie then holds a session of it, never the token (issue 33.3).
    const principal = bearer ? await source.auth.authenticate(bearer) : null;
    const session = principal ? await signIn.start(request, token) : null;
    if (!session) {
      const problem = token === "" ? "Enter a token." : "That token was not accepted.";
      return page(401, layout(chrome, "Sign in", html`<h1>Sign in</h1>${loginForm(chrome, next, problem)}`));
    }
    return redirect(next ?? `${prefix}/`, { "set-cookie": sessionCookie(prefix, session, secure(url)) });
  }

  /**
   * decision D31: "Retry now", a form post from the run page: refused unless it proves it comes
   * from this site's page (CSRF), then the API action's service and permissions, answered by a
   * redirect back to the run page with a notice (a refusal too).
   */
  async function retryPost(request: Request, url: URL, runId: string, resultId: string, chrome: Chrome): Promise<Response> {
    const byId = `${prefix}/runs/${encodeURIComponent(runId)}`;
    if (!isSameOriginPost(request, url)) return page(403, messagePage(chrome, "Forbidden", "Retry from this site's own run page."));
    const caller = await identify(request);
    if (!caller.principal) return unauthorized(url, chrome, caller, byId);
    const form = await readForm(request);
    if (!form) return page(400, messagePage(chrome, "Bad request", "Send the Retry now form."));
    const notice = await retryResult(source, caller.principal, runId, resultId);
    if (notice === null) return page(404, notFoundPage(chrome));
    // Back to the path the run page was opened at (either of its two), else to the run by id.
    const back = safeNext(form.get("back"), prefix)?.split("?")[0];
    const to = back?.endsWith(`/runs/${encodeURIComponent(runId)}`) ? back : byId;
    return redirect(`${to}?notice=${notice}#result-${encodeURIComponent(resultId)}`);
  }

  async function route(request: Request, url: URL): Promise<Response> {
    const path = url.pathname;
    if (path !== prefix && !path.startsWith(`${prefix}/`)) return page(404, notFoundPage({ prefix, login, signedIn: false }));
    const rest = path.slice(prefix.length) || "/";
    const method = request.method === "HEAD" ? "GET" : request.method;
    const allow = (methods: string, run: () => Promise<Response> | Response): Promise<Response> | Response =>
      methods.split(",").includes(method)
        ? run()
        : page(405, messagePage({ prefix, login, signedIn: false }, "Method not allowed", `Use ${methods}.`), { allow: methods.replace("GET", "GET,HEAD") });

    const signedIn = login && readCookie(request) !== null;
    const chrome: Chrome = { prefix, login, signedIn };
    if (rest === "/") return allow("GET", async () => homeRoute(url, chrome, await identify(request)));
    if (rest === "/login" && login) {
      return allow("GET,POST", () =>
        method === "POST"
          ? loginPost(request, url, chrome)
          : page(200, layout(chrome, "Sign in", html`<h1>Sign in</h1>${loginForm(chrome, safeNext(url.searchParams.get("next"), prefix), null)}`)),
      );
    }
    if (rest === "/logout" && login) {
      return allow("POST", async () => {
        if (isCrossSite(request, url)) return page(403, messagePage(chrome, "Forbidden", "Sign out from this site's own page."));
        await signIn.end(request);
        return redirect(`${prefix}/login`, { "set-cookie": clearedCookie(prefix, secure(url)) });
      });
    }
    if (rest === "/runs") {
      return allow("GET", () => {
        const id = url.searchParams.get("run_id")?.trim();
        return id ? redirect(`${prefix}/runs/${encodeURIComponent(id)}`) : page(404, notFoundPage(chrome));
      });
    }
    const retry = RETRY_PATH.exec(rest);
    if (retry) {
      const ids = decodeSegments([retry[1]!, retry[2]!]);
      return ids ? allow("POST", () => retryPost(request, url, ids[0]!, ids[1]!, chrome)) : page(404, notFoundPage(chrome));
    }
    // `/runs/:id` first: an organization named `runs` has no workspace page (its runs still open by
    // id); nor do organizations named `runs`, `login` or `logout` have an organization page.
    if (RESERVED.has(rest)) return page(404, notFoundPage(chrome));
    const byId = /^\/runs\/([^/]+)$/.exec(rest);
    const inWorkspace = byId ? null : /^\/([^/]+)\/([^/]+)\/runs\/([^/]+)$/.exec(rest);
    const ofWorkspace = byId || inWorkspace ? null : /^\/([^/]+)\/([^/]+)$/.exec(rest);
    const ofOrganization = byId || inWorkspace || ofWorkspace ? null : /^\/([^/]+)$/.exec(rest);
    const segments = decodeSegments((byId ?? inWorkspace ?? ofWorkspace ?? ofOrganization ?? []).slice(1) as string[]);
    if (!segments || segments.length === 0) return page(404, notFoundPage(chrome));
    const [first, second, third] = segments as [string, string, string];
    return allow("GET", async () => {
      const caller = await identify(request);
      if (byId) return runRoute(url, first, null, chrome, caller);
      if (ofOrganization) return organizationRoute(url, first, chrome, caller);
      const place = { organization: first, workspaceName: second };
      return inWorkspace ? runRoute(url, third, place, chrome, caller) : workspaceRoute(url, place, chrome, caller);
    });
  }

  return async function resultsPage(request: Request): Promise<Response> {
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
  };
}
