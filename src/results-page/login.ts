/** The sign-in cookie (it holds a session, src/results-page/sign-in.ts): reading it, setting it, clearing it, and where to go after signing in. */

export const COOKIE_NAME = "runplane_token";
/** A token form is tiny; anything bigger is not a sign-in. */
export const LOGIN_BODY_LIMIT = 8 * 1024;

export function readCookie(request: Request, name: string = COOKIE_NAME): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    try {
      const value = decodeURIComponent(part.slice(eq + 1).trim());
      return value === "" ? null : value;
    } catch {
      return null;
    }
  }
  return null;
}

const attributes = (prefix: string, secure: boolean): string => `HttpOnly; SameSite=Strict; Path=${prefix}/${secure ? "; Secure" : ""}`;

/**
 * The cookie of a sign-in session (a session's secret, never an API token). No
 * Max-Age: the browser forgets it when its session ends, the server when the sign-in's lifetime does.
 */
export const sessionCookie = (prefix: string, session: string, secure: boolean): string =>
  `${COOKIE_NAME}=${encodeURIComponent(session)}; ${attributes(prefix, secure)}`;

export const clearedCookie = (prefix: string, secure: boolean): string => `${COOKIE_NAME}=; ${attributes(prefix, secure)}; Max-Age=0`;

const LOCAL = "http://local.invalid";

/**
 * `next` as a path below the page's prefix, or null. Only a path (`/…`, never `//host`, `/\host`,
 * a scheme, a backslash or a control character) counts; it is resolved so `/app/../x` cannot
 * leave the prefix, and the result is what the browser is sent to.
 */
export function safeNext(next: string | null | undefined, prefix: string): string | null {
  if (!next || next.length > 2048 || !next.startsWith("/") || next.startsWith("//")) return null;
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return null;
  let url: URL;
  try {
    url = new URL(next, LOCAL);
  } catch {
    return null;
  }
  if (url.origin !== LOCAL || !url.pathname.startsWith(`${prefix}/`)) return null;
  return `${url.pathname}${url.search}`;
}

/**
 * The page's own origin: the request's host with the scheme browsers come by (https when the
 * page is served over TLS, a proxy's included, as `secure` says).
 */
export function pageOrigin(url: URL, secure: boolean): string {
  return new URL(`${secure ? "https:" : url.protocol}//${url.host}`).origin;
}

/**
 * Whether a state-changing form post comes from another site (login CSRF): Chromium and Firefox
 * send `Sec-Fetch-Site`; otherwise a present `Origin` must be the page's origin, scheme, host and
 * port all compared (`https://host` posting to an http page is another origin).
 */
export function isCrossSite(request: Request, origin: string): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site !== "same-origin" && site !== "none";
  const sent = request.headers.get("origin");
  if (sent === null) return false;
  try {
    return new URL(sent).origin !== origin;
  } catch {
    return true;
  }
}

/**
 * Whether a state-changing form post proves it comes from this site's own page: `Sec-Fetch-Site:
 * same-origin`, or, from a browser without it, an `Origin` equal to the page's origin. Stricter than
 * {@link isCrossSite}, which lets a post with neither header through: an action done with the
 * caller's credential, such as "Retry now" (D31), needs the proof, and every current browser sends
 * one of the two with a form post (the page's `Referrer-Policy` keeps `Origin` from being `null`).
 */
export function isSameOriginPost(request: Request, origin: string): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin";
  return request.headers.get("origin") !== null && !isCrossSite(request, origin);
}

/** The urlencoded form body, read up to {@link LOGIN_BODY_LIMIT} bytes; null when it is not one. */
export async function readForm(request: Request): Promise<URLSearchParams | null> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return null;
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > LOGIN_BODY_LIMIT || request.body === null) return declared > LOGIN_BODY_LIMIT ? null : new URLSearchParams();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > LOGIN_BODY_LIMIT) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new URLSearchParams(new TextDecoder().decode(bytes));
}

/** The request as the API authenticator expects a bearer credential; null when the token cannot be a header. */
export function withBearer(request: Request, token: string): Request | null {
  try {
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${token}`);
    return new Request(request.url, { method: "GET", headers });
  } catch {
    return null;
  }
}
