import { sha256Hex } from "../crypto/random.js";
import type { BucketAnswer } from "../domain/token-bucket.js";
import { tooManyRequests } from "../errors.js";
import { bearerToken } from "../services/principals.js";
import { createKeyedLimiter } from "../services/keyed-limiter.js";
import type { Route } from "./types.js";

/**
 * decision D33 (docs/decisions/D33-rate-limits.md): requests limited as HCP Terraform limits them.
 * Each credential (the digest of its bearer token, never the token) has its own token bucket; a
 * request without one counts against its URL path, so a log URL's capability is its own credential.
 * A task result callback counts against its result instead, so one noisy integration slows only
 * itself. Every answer of a limited route carries `X-RateLimit-Limit`, `-Remaining` and `-Reset`;
 * a refusal is 429 with them and `Retry-After`. `GET /ping` is never refused (a liveness probe must
 * not fail because of someone else's flood) but tells the caller where its credential stands:
 * go-tfe builds its client-side limiter from that answer.
 */
export interface RateLimitOptions {
  /** Requests per second per credential. Default 30, HCP Terraform's documented figure. */
  requestsPerSecond?: number;
  /** Requests a credential may send at once. Default: `requestsPerSecond` (at least 1). */
  burst?: number;
  /** Callbacks per second per task result. Default 1. */
  callbacksPerSecond?: number;
  /** Callbacks one task result may send at once. Default 10. */
  callbackBurst?: number;
  /** Buckets kept in memory per limiter, the least recently used dropped beyond it. Default 10,000. */
  maxKeys?: number;
}

export const RATE_LIMIT_DEFAULTS = { requestsPerSecond: 30, callbacksPerSecond: 1, callbackBurst: 10, maxKeys: 10_000 } as const;

const CALLBACK_PATH = "/task-results/:task_result_id/callback";
const PING_PATH = "/ping";
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

export interface RateLimit {
  /** Counts the request: resolves the headers its answer carries, or throws the 429 ApiError. */
  admit(request: Request, route: Route, params: Record<string, string>, url: URL): Record<string, string>;
  /** Buckets held, over both limiters (at most 2 x `maxKeys`). */
  readonly size: number;
}

/** A key of at most 64 characters however long the URL an outsider sent: memory is keys x this. */
const shortKey = (text: string): string => (text.length <= 64 ? text : sha256Hex(text));

export function createRateLimit(options: RateLimitOptions, now: () => number): RateLimit {
  const perSecond = options.requestsPerSecond ?? RATE_LIMIT_DEFAULTS.requestsPerSecond;
  const maxKeys = options.maxKeys ?? RATE_LIMIT_DEFAULTS.maxKeys;
  // A bucket must hold a whole token: 0.5 a second still lets one request through every 2 s.
  const credentials = createKeyedLimiter({ perSecond, burst: options.burst ?? Math.max(1, Math.ceil(perSecond)), maxKeys, now });
  const callbackRate = options.callbacksPerSecond ?? RATE_LIMIT_DEFAULTS.callbacksPerSecond;
  const callbackBurst = options.callbackBurst ?? RATE_LIMIT_DEFAULTS.callbackBurst;
  const callbacks = createKeyedLimiter({ perSecond: callbackRate, burst: callbackBurst, maxKeys, now });

  const credentialKey = (request: Request, url: URL): string => {
    const token = bearerToken(request);
    return token === null ? `path ${shortKey(url.pathname)}` : `token ${sha256Hex(token)}`;
  };

  const decide = (answer: BucketAnswer, limit: number): Record<string, string> => {
    const headers = headersOf(limit, answer);
    if (!answer.ok) throw tooManyRequests(DETAIL, answer.waitMs, headers);
    return headers;
  };

  return {
    admit(request, route, params, url) {
      if (route.path === CALLBACK_PATH) return decide(callbacks.take(shortKey(params.task_result_id!)), callbackRate);
      const key = credentialKey(request, url);
      if (route.path === PING_PATH) return headersOf(perSecond, credentials.peek(key));
      return decide(credentials.take(key), perSecond);
    },
    get size() {
      return credentials.size + callbacks.size;
    },
  };
}
