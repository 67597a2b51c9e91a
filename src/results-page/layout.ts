import { html, raw, type Html } from "./escape.js";
import { STYLES } from "./styles.js";

/** The document shell and the small pages: errors, sign-in. */

export interface Chrome {
  prefix: string;
  /** Whether the sign-in form and sign-out button exist (off when the host authenticates). */
  login: boolean;
  /** Show the sign-out button (the caller came with the page's cookie). */
  signedIn: boolean;
}

export function layout(chrome: Chrome, title: string, body: Html): string {
  const signOut = chrome.login && chrome.signedIn
    ? html`<form method="post" action="${chrome.prefix}/logout"><button type="submit">Sign out</button></form>`
    : null;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · runplane</title>
<style>${raw(STYLES)}</style>
</head>
<body>
<header class="top"><a href="${chrome.prefix}/">runplane · run task results</a>${signOut}</header>
<main>
${body}
</main>
</body>
</html>
`.html;
}

export function loginForm(chrome: Chrome, next: string | null, problem: string | null): Html {
  if (!chrome.login) return html`<p>Sign in through your host application, then reload this page.</p>`;
  return html`<section class="card login">
<h2>Sign in</h2>
<p class="muted">Paste an API token. It signs you in to a session of its own: the token itself is not kept in this browser.</p>
${problem ? html`<p class="error-text" role="alert">${problem}</p>` : null}
<form method="post" action="${chrome.prefix}/login">
${next ? html`<input type="hidden" name="next" value="${next}">` : null}
<label>API token <input type="password" name="token" autocomplete="off" spellcheck="false" required></label>
<div><button type="submit" class="primary">Sign in</button></div>
</form>
</section>`;
}

export function unauthorizedPage(chrome: Chrome, next: string | null, problem: string | null = null): string {
  return layout(chrome, "Sign in", html`<h1>Sign in required</h1>
<p>This page shows run task results, which need a credential that may read them.</p>
${loginForm(chrome, next, problem)}`);
}

export function notFoundPage(chrome: Chrome, what: "run" | "workspace" | "organization" = "run"): string {
  // decision D4: the same page for a missing run and one the caller may not read.
  return layout(chrome, "Not found", html`<h1>Not found</h1>
<p>There is no such ${what}, or you are not allowed to see it.</p>
<p><a href="${chrome.prefix}/">Your workspaces and recent runs</a></p>`);
}

export function messagePage(chrome: Chrome, title: string, message: string): string {
  return layout(chrome, title, html`<h1>${title}</h1><p>${message}</p>`);
}
