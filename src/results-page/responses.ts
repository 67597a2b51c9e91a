import { clearedCookie } from "./login.js";
import { unauthorizedPage, type Chrome } from "./layout.js";
import type { Caller } from "./sign-in.js";
import { STYLES_HASH } from "./styles.js";

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

export const page = (status: number, body: string, headers: Record<string, string> = {}): Response =>
  new Response(body, { status, headers: { ...SECURITY_HEADERS, ...headers } });
export const redirect = (location: string, headers: Record<string, string> = {}): Response =>
  new Response(null, { status: 303, headers: { ...SECURITY_HEADERS, location, ...headers } });

/** decision D4: 401 only for a missing or invalid credential; a stale cookie is cleared. */
export function unauthorized(prefix: string, secureCookie: boolean, chrome: Chrome, caller: Caller, next: string): Response {
  const headers: Record<string, string> = { "www-authenticate": 'Bearer realm="runplane"' };
  if (caller.cookie) headers["set-cookie"] = clearedCookie(prefix, secureCookie);
  const problem = caller.cookie ? "Your sign-in is no longer valid. Sign in again." : null;
  return page(401, unauthorizedPage({ ...chrome, signedIn: false }, next, problem), headers);
}
