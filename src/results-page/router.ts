import { html } from "./escape.js";
import { createFormPosts } from "./form-posts.js";
import { layout, loginForm, messagePage, notFoundPage, type Chrome } from "./layout.js";
import { clearedCookie, isCrossSite, pageOrigin, readCookie, safeNext } from "./login.js";
import type { PageParts } from "./page-parts.js";
import { createReadRoutes } from "./read-routes.js";
import { page, redirect } from "./responses.js";
import { RETRY_PATH } from "./retry-action.js";

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

/** Which page a request is for, by its path under the prefix and its method (405 for another). */
export function createRouter(parts: PageParts): (request: Request, url: URL) => Promise<Response> {
  const { prefix, login, signIn, secure } = parts;
  const identify = signIn.identify;
  const reads = createReadRoutes(parts);
  const posts = createFormPosts(parts);

  return async function route(request: Request, url: URL): Promise<Response> {
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
    if (rest === "/") return allow("GET", async () => reads.homeRoute(url, chrome, await identify(request)));
    if (rest === "/login" && login) {
      return allow("GET,POST", () =>
        method === "POST"
          ? posts.loginPost(request, url, chrome)
          : page(200, layout(chrome, "Sign in", html`<h1>Sign in</h1>${loginForm(chrome, safeNext(url.searchParams.get("next"), prefix), null)}`)),
      );
    }
    if (rest === "/logout" && login) {
      return allow("POST", async () => {
        if (isCrossSite(request, pageOrigin(url, secure(url)))) return page(403, messagePage(chrome, "Forbidden", "Sign out from this site's own page."));
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
      return ids ? allow("POST", () => posts.retryPost(request, url, ids[0]!, ids[1]!, chrome)) : page(404, notFoundPage(chrome));
    }
    // `/runs/:id` first: an organization named `runs` has no workspace page (its runs still open by
    // id); nor do organizations named `runs`, `login` or `logout` have an organization page.
    if (RESERVED.has(rest)) return page(404, notFoundPage(chrome));
    // decision D53: an organization's audit view (`-` is no workspace name runplane's pages link to).
    const audit = /^\/([^/]+)\/-\/audit$/.exec(rest);
    if (audit) {
      const org = decodeSegments([audit[1]!]);
      return org ? allow("GET", async () => reads.auditRoute(url, org[0]!, chrome, await identify(request))) : page(404, notFoundPage(chrome));
    }
    const byId = /^\/runs\/([^/]+)$/.exec(rest);
    const inWorkspace = byId ? null : /^\/([^/]+)\/([^/]+)\/runs\/([^/]+)$/.exec(rest);
    const ofWorkspace = byId || inWorkspace ? null : /^\/([^/]+)\/([^/]+)$/.exec(rest);
    const ofOrganization = byId || inWorkspace || ofWorkspace ? null : /^\/([^/]+)$/.exec(rest);
    const segments = decodeSegments((byId ?? inWorkspace ?? ofWorkspace ?? ofOrganization ?? []).slice(1) as string[]);
    if (!segments || segments.length === 0) return page(404, notFoundPage(chrome));
    const [first, second, third] = segments as [string, string, string];
    return allow("GET", async () => {
      const caller = await identify(request);
      if (byId) return reads.runRoute(url, first, null, chrome, caller);
      if (ofOrganization) return reads.organizationRoute(url, first, chrome, caller);
      const place = { organization: first, workspaceName: second };
      return inWorkspace ? reads.runRoute(url, third, place, chrome, caller) : reads.workspaceRoute(url, place, chrome, caller);
    });
  };
}
