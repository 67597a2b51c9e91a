/**
 * When a failed run task request is tried again (decision D15): exponential backoff from 1 s,
 * doubling to a 60 s cap, with jitter. Pure: the caller passes the random source and the time.
 */

export const RETRY_BASE_MS = 1_000;
export const RETRY_CAP_MS = 60_000;
/** Each delay is shortened by up to this fraction, so workers that failed together spread out. */
export const RETRY_JITTER = 0.2;

/**
 * The wait after the `attempt`-th failed attempt (1 for the first): `min(60 s, 1 s * 2^(attempt-1))`
 * minus up to 20 % jitter (`random()` in [0, 1); 0 gives the exact doubling). A `retryAfterMs`
 * from the receiver lengthens the wait, but never past the cap: a receiver cannot park a delivery
 * longer than the backoff ever would, and never shortens it.
 */
export function retryDelayMs(attempt: number, random: () => number, retryAfterMs: number | null = null): number {
  const base = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1));
  const jittered = base - Math.floor(base * RETRY_JITTER * Math.min(Math.max(random(), 0), 1));
  return retryAfterMs === null ? jittered : Math.max(jittered, Math.min(retryAfterMs, RETRY_CAP_MS));
}

/** Statuses whose `Retry-After` is honoured: the receiver says when it can take the request again. */
export const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * A `Retry-After` value in milliseconds from `now`: delta-seconds or an HTTP-date (RFC 9110
 * 10.2.3). Null when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  const text = value?.trim() ?? "";
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  if (!/[A-Za-z]/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/**
 * decisions D15 and D16: the most attempts a delivery can have made when its deadline comes, given
 * `made` attempts so far and the next one due at `nextAt` (ms since the epoch): every later wait
 * the shortest the jitter allows (a `Retry-After` only lengthens one), every attempt taking no
 * time, and no attempt starting at or after `deadline`. An upper bound, never fewer than `made`;
 * with the default 10 minute window a delivery makes at most 18 attempts.
 */
export function maxAttemptsBefore(made: number, nextAt: number, deadline: number): number {
  let count = made;
  for (let at = nextAt; at < deadline; at += retryDelayMs(count, () => 1)) count++;
  return count;
}
