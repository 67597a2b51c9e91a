import { sha256Hex } from "../crypto/random.js";
import { peekToken, takeToken, type Bucket, type BucketAnswer } from "../domain/token-bucket.js";
import { tooManyRequests } from "../errors.js";
import { bearerToken } from "../services/principals.js";
import { createKeyedLimiter, type KeyedLimiter } from "../services/keyed-limiter.js";
import type { Route } from "./types.js";

/**
 * decision D33 (docs/decisions/D33-rate-limits.md): requests limited as HCP Terraform limits them.
 * Each credential (the digest of its bearer token, never the token) has its own token bucket. A
 * token that has authenticated once has its bucket among the verified ones, which no other kind of
 * request can push out; any other request (a token not yet verified, or none: then its URL path is
 * its key) takes from its own bucket and from one bucket shared by all of them, so a flood of
 * invented tokens or paths is limited as a whole. A task result callback counts against its result
 * and the token it carries instead, so one noisy integration slows only itself and nobody without
 * its token can spend its allowance. Every answer of a limited route carries
 * `X-RateLimit-Limit`, `-Remaining` and `-Reset`; a refusal is 429 with them and `Retry-After`.
 * A log URL whose capability verifies (D32) counts against its log alone, never the shared bucket:
 * its reader carries no credential, and a flood of invented tokens must not starve it.
 * `GET /ping` is never refused (a liveness probe must not fail because of someone else's flood) but
 * tells the caller where its credential stands: go-tfe builds its client-side limiter from that answer.
 */
export interface RateLimitOptions {
  /** Requests per second per credential. Default 30, HCP Terraform's documented figure. */
  requestsPerSecond?: number;
  /** Requests a credential may send at once. Default: `requestsPerSecond` (at least 1). */
  burst?: number;
  /**
   * Requests per second shared by every request whose token has not authenticated yet, or that has
   * none, and as many at once. Default: 10 x `requestsPerSecond`.
   */
  unverifiedPerSecond?: number;
  /** Callbacks per second per task result. Default 1. */
  callbacksPerSecond?: number;
  /** Callbacks one task result may send at once. Default 10. */
  callbackBurst?: number;
  /** Buckets kept in memory per limiter, the least recently used dropped beyond it. Default 10,000. */
  maxKeys?: number;
}

export const RATE_LIMIT_DEFAULTS = { requestsPerSecond: 30, unverifiedShare: 10, callbacksPerSecond: 1, callbackBurst: 10, maxKeys: 10_000 } as const;

const CALLBACK_PATH = "/task-results/:task_result_id/callback";
const PING_PATH = "/ping";
const LOGS_PATH = "/logs/:capability";
/** The one key of tokenless requests that match no route (a path never starts without "/"). */
const UNMATCHED = "unmatched";
const DETAIL = "You have exceeded the API's rate limit.";

/** Seconds as a decimal, as HCP writes `X-RateLimit-Reset` ("0.0", "0.034"): go-tfe parses it as a float. */
export function resetSeconds(waitMs: number): string {
  const seconds = Math.ceil(waitMs) / 1000;
  return Number.isInteger(seconds) ? seconds.toFixed(1) : String(seconds);
}

const headersOf = (limit: number, answer: BucketAnswer): Record<string, string> => ({
  "x-ratelimit-limit": String(limit),
  "x-ratelimit-remaining": String(answer.remaining),
  "x-ratelimit-reset": resetSeconds(answer.waitMs),
});

/** A request counted: the headers its answer carries, and what to call with the answer's status. */
export interface Admission {
  headers: Record<string, string>;
  /** An authenticated answer verifies the request's token; a 401 takes a verified token back. */
  answered(status: number): void;
}

export interface RateLimit {
  /** Counts the request (`route` null: no route matched): resolves its admission, or throws the 429 ApiError. */
  admit(request: Request, route: Route | null, params: Record<string, string>, url: URL): Admission;
  /** Keyed buckets held, over the five limiters (at most 5 x `maxKeys`; the shared bucket is one more). */
  readonly size: number;
}

/** A key of at most 64 characters however long the URL an outsider sent: memory is keys x this. */
const shortKey = (text: string): string => (text.length <= 64 ? text : sha256Hex(text));

/** What two buckets allow together: a request needs a token of each. */
const both = (own: BucketAnswer, shared: BucketAnswer): BucketAnswer => ({
  ok: own.ok && shared.ok,
  bucket: own.bucket,
  remaining: Math.min(own.remaining, shared.remaining),
  waitMs: Math.max(own.waitMs, shared.waitMs),
});

/**
 * Whether an answer proves the request's bearer token (true), disproves it (false) or says nothing
 * (null). A public route ignores the token and the callback checks another kind, so neither proves
 * anything. A principal route authenticates before anything else can fail (D4, D30), so any answer
 * but 401 below 500 proves it; a custom route checks its query, maybe its body, before it
 * authenticates, so there only a success does.
 */
function proof(route: Route | null, status: number): boolean | null {
  if (!route || route.auth === "none" || route.path === CALLBACK_PATH) return null;
  if (status === 401) return false;
  return status < (route.auth === "principal" ? 500 : 400) ? true : null;
}

const IGNORE = (): void => undefined;

/**
 * The log a `log-read-url` capability grants (run id and kind, one key per log whichever URL of it
 * is read), or null when it does not verify (malformed, forged, expired).
 */
export type VerifyLogCapability = (capability: string) => string | null;

/** The figures of `options` with their defaults: each credential's limit, the shared one, the callbacks'. */
function limitsOf(options: RateLimitOptions, now: () => number) {
  const perSecond = options.requestsPerSecond ?? RATE_LIMIT_DEFAULTS.requestsPerSecond;
  const maxKeys = options.maxKeys ?? RATE_LIMIT_DEFAULTS.maxKeys;
  // A bucket must hold a whole token: 0.5 a second still lets one request through every 2 s.
  const limit = { perSecond, burst: options.burst ?? Math.max(1, Math.ceil(perSecond)), maxKeys, now };
  const sharedRate = options.unverifiedPerSecond ?? RATE_LIMIT_DEFAULTS.unverifiedShare * perSecond;
  const sharedLimit = { perSecond: sharedRate, burst: Math.max(1, Math.ceil(sharedRate)) };
  const callbackRate = options.callbacksPerSecond ?? RATE_LIMIT_DEFAULTS.callbacksPerSecond;
  const callbackBurst = options.callbackBurst ?? RATE_LIMIT_DEFAULTS.callbackBurst;
  return { perSecond, limit, sharedLimit, callbackRate, callbackLimit: { perSecond: callbackRate, burst: callbackBurst, maxKeys, now } };
}

export function createRateLimit(options: RateLimitOptions, now: () => number, verifyLog?: VerifyLogCapability): RateLimit {
  const { perSecond, limit, sharedLimit, callbackRate, callbackLimit } = limitsOf(options, now);
  const verified = createKeyedLimiter(limit);
  const unverified = createKeyedLimiter(limit);
  let shared: Bucket | undefined;
  const callbacks = createKeyedLimiter(callbackLimit);
  const provenCallbacks = createKeyedLimiter(callbackLimit);
  const logs = createKeyedLimiter(limit);

  const decide = (answer: BucketAnswer, figure: number): Record<string, string> => {
    const headers = headersOf(figure, answer);
    if (!answer.ok) throw tooManyRequests(DETAIL, answer.waitMs, headers);
    return headers;
  };

  /** Both buckets or neither: a key refused on its own takes nothing from the shared one, and the reverse. */
  const takeUnverified = (key: string, limiter: KeyedLimiter = unverified): BucketAnswer => {
    const pool = takeToken(shared, now(), sharedLimit);
    if (!pool.ok) return both(limiter.peek(key), pool);
    const own = limiter.take(key);
    if (own.ok) shared = pool.bucket;
    return both(own, pool);
  };

  /** Moves a token's bucket, as it stands, between the limiters when an answer proves or disproves it. */
  const settle = (route: Route | null, key: string, status: number): void => {
    const proved = proof(route, status);
    if (proved === true && !verified.has(key)) verified.insert(key, unverified.remove(key));
    if (proved === false && verified.has(key)) unverified.insert(key, verified.remove(key));
  };

  /** Without a token, a request counts against its path; against one key when no route matched, or an outsider would make a bucket per invented path. */
  const keyOf = (token: string | null, route: Route | null, url: URL): string =>
    token !== null ? `token ${sha256Hex(token)}` : route ? `path ${shortKey(url.pathname)}` : UNMATCHED;

  const admitCredential = (request: Request, route: Route | null, url: URL): Admission => {
    const token = bearerToken(request);
    const key = keyOf(token, route, url);
    const answered = token === null ? IGNORE : (status: number) => settle(route, key, status);
    if (verified.has(key)) {
      if (route?.path === PING_PATH) return { headers: headersOf(perSecond, verified.peek(key)), answered: IGNORE };
      return { headers: decide(verified.take(key), perSecond), answered };
    }
    if (route?.path === PING_PATH) return { headers: headersOf(perSecond, both(unverified.peek(key), peekToken(shared, now(), sharedLimit))), answered: IGNORE };
    return { headers: decide(takeUnverified(key), perSecond), answered };
  };

  /**
   * A callback counts against its result and the token it carries, so requests with another token
   * (or none) never spend the integration's own allowance: anyone who learns a result id could
   * otherwise hold its verdict off until the deadline. A token not yet accepted by a callback of
   * that result also takes from the shared bucket, as any unproven credential does.
   */
  const admitCallback = (request: Request, resultId: string): Admission => {
    const token = bearerToken(request);
    const key = `${shortKey(resultId)} ${token === null ? "none" : sha256Hex(token)}`;
    if (provenCallbacks.has(key)) {
      const answered = (status: number) => status === 401 && callbacks.insert(key, provenCallbacks.remove(key));
      return { headers: decide(provenCallbacks.take(key), callbackRate), answered };
    }
    const answered = (status: number) => token !== null && status < 400 && provenCallbacks.insert(key, callbacks.remove(key));
    return { headers: decide(takeUnverified(key, callbacks), callbackRate), answered };
  };

  /** A verified capability is its own credential: one bucket per log, taking nothing shared. */
  const admitLog = (log: string): Admission => ({ headers: decide(logs.take(`log ${shortKey(log)}`), perSecond), answered: IGNORE });

  return {
    admit(request, route, params, url) {
      if (route?.path === CALLBACK_PATH) return admitCallback(request, params.task_result_id!);
      const log = route?.path === LOGS_PATH && verifyLog ? verifyLog(params.capability!) : null;
      if (log !== null) return admitLog(log);
      return admitCredential(request, route, url);
    },
    get size() {
      return verified.size + unverified.size + callbacks.size + provenCallbacks.size + logs.size;
    },
  };
}
