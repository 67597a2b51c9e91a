import type { Authenticate } from "../http/handler.js";
import type { Principal } from "../schemas/common.js";
import { readCookie } from "./login.js";
import type { ResultsPageSource } from "./types.js";

/** How long a sign-in lasts unless `sessionLifetimeMs` says otherwise: a working day. */
export const DEFAULT_SESSION_LIFETIME_MS = 8 * 60 * 60 * 1000;

export interface Caller {
  principal: Principal | null;
  /** The caller came with the page's cookie (it may be stale). */
  cookie: boolean;
}

interface SignInOptions {
  login: boolean;
  authenticate: Authenticate | undefined;
  lifetimeMs: number;
}

/**
 * The page's sign-in: the cookie holds a server-side session (`runplane.auth.sessions`),
 * never the API token typed into the form. The session ends after `lifetimeMs`, at sign-out, when
 * its token is revoked, or when the same browser signs in again.
 */
export function createSignIn(source: ResultsPageSource, options: SignInOptions) {
  if (!Number.isFinite(options.lifetimeMs) || options.lifetimeMs <= 0) throw new RangeError("sessionLifetimeMs must be a positive number of milliseconds");
  const sessions = source.auth.sessions;

  /** The caller of a page request: the host's `authenticate`, else the cookie's session, else a bearer header. */
  async function identify(request: Request): Promise<Caller> {
    if (options.authenticate) return { principal: await options.authenticate(request), cookie: false };
    const cookie = options.login && !request.headers.has("authorization") ? readCookie(request) : null;
    if (cookie === null) return { principal: await source.auth.authenticate(request), cookie: false };
    return { principal: await sessions.authenticate(cookie), cookie: true };
  }

  /**
   * A new session for an API token the API accepted; null when it is no token of the default
   * authenticator. The browser's previous session ends: signing in again does not pile them up.
   */
  async function start(request: Request, token: string): Promise<string | null> {
    const session = await sessions.create(token, options.lifetimeMs);
    if (!session) return null;
    await end(request);
    return session.token;
  }

  /** Sign-out: the cookie's session is deleted on the server, so a copy of the cookie is worthless. */
  async function end(request: Request): Promise<void> {
    const previous = readCookie(request);
    if (previous !== null) await sessions.revoke(previous);
  }

  return { identify, start, end };
}
