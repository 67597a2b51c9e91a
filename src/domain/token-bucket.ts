/**
 * decision D33: the token bucket behind every rate limit. A bucket holds at most `burst` tokens and
 * gains `perSecond` tokens a second; a request takes one. Pure: the caller passes the time (ms).
 */

export interface BucketLimit {
  /** Tokens gained per second (may be below 1: 0.1 is one every ten seconds). */
  perSecond: number;
  /** Tokens a full bucket holds: how many requests may come at once. */
  burst: number;
}

export interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms). */
  at: number;
}

export interface BucketAnswer {
  ok: boolean;
  /** The bucket after the request (store it). */
  bucket: Bucket;
  /** Whole tokens left: requests that may follow at once. */
  remaining: number;
  /** Milliseconds until the next token is there (0 while one is). */
  waitMs: number;
}

/** The bucket at `now`: a new key starts full; a clock that went back adds nothing. */
export function refill(bucket: Bucket | undefined, now: number, limit: BucketLimit): Bucket {
  if (!bucket) return { tokens: limit.burst, at: now };
  const gained = (Math.max(0, now - bucket.at) * limit.perSecond) / 1000;
  return { tokens: Math.min(limit.burst, bucket.tokens + gained), at: Math.max(now, bucket.at) };
}

function answer(ok: boolean, bucket: Bucket, limit: BucketLimit): BucketAnswer {
  const waitMs = bucket.tokens >= 1 ? 0 : ((1 - bucket.tokens) * 1000) / limit.perSecond;
  return { ok, bucket, remaining: Math.floor(bucket.tokens), waitMs };
}

/** Takes one token if there is one; a refusal leaves the bucket as it was (brought up to date). */
export function takeToken(bucket: Bucket | undefined, now: number, limit: BucketLimit): BucketAnswer {
  const current = refill(bucket, now, limit);
  if (current.tokens < 1) return answer(false, current, limit);
  return answer(true, { tokens: current.tokens - 1, at: current.at }, limit);
}

/** What a request would get now, taking nothing. */
export function peekToken(bucket: Bucket | undefined, now: number, limit: BucketLimit): BucketAnswer {
  const current = refill(bucket, now, limit);
  return answer(current.tokens >= 1, current, limit);
}
