import { html } from "./escape.js";
import { layout, loginForm, messagePage, notFoundPage, type Chrome } from "./layout.js";
import { isCrossSite, isSameOriginPost, pageOrigin, readForm, safeNext, sessionCookie, withBearer } from "./login.js";
import type { PageParts } from "./page-parts.js";
import { page, redirect, unauthorized } from "./responses.js";
import { retryResult } from "./retry-action.js";

/** The page's two forms that write: signing in, and a result's "Retry now" (D31). */
export function createFormPosts({ source, prefix, signIn, secure }: PageParts) {
  const identify = signIn.identify;

  async function loginPost(request: Request, url: URL, chrome: Chrome): Promise<Response> {
    if (isCrossSite(request, pageOrigin(url, secure(url)))) return page(403, messagePage(chrome, "Forbidden", "Sign in from this site's own form."));
    const form = await readForm(request);
    if (!form) return page(400, messagePage(chrome, "Bad request", "Send the sign-in form."));
    const next = safeNext(form.get("next"), prefix);
    const token = (form.get("token") ?? "").trim();
    const bearer = token === "" ? null : withBearer(request, token);
    // The API must accept the token (a host's own authenticator too), and it must be an API token
    // of runplane's directory: the cookie then holds a session of it, never the token.
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
    if (!isSameOriginPost(request, pageOrigin(url, secure(url)))) return page(403, messagePage(chrome, "Forbidden", "Retry from this site's own run page."));
    const caller = await identify(request);
    if (!caller.principal) return unauthorized(prefix, secure(url), chrome, caller, byId);
    const form = await readForm(request);
    if (!form) return page(400, messagePage(chrome, "Bad request", "Send the Retry now form."));
    const notice = await retryResult(source, caller.principal, runId, resultId);
    if (notice === null) return page(404, notFoundPage(chrome));
    // Back to the path the run page was opened at (either of its two), else to the run by id.
    const back = safeNext(form.get("back"), prefix)?.split("?")[0];
    const to = back?.endsWith(`/runs/${encodeURIComponent(runId)}`) ? back : byId;
    return redirect(`${to}?notice=${notice}#result-${encodeURIComponent(resultId)}`);
  }

  return { loginPost, retryPost };
}
