import { describe, expect, it } from "vitest";
import { peekToken, takeToken, type Bucket } from "../../src/domain/token-bucket.js";
import { resetSeconds } from "../../src/http/rate-limit.js";
import { createKeyedLimiter } from "../../src/services/keyed-limiter.js";

// Decision D33: the token bucket behind every rate limit, and the bounded map that holds buckets
// by key. The clock is a number the test moves: nothing sleeps.

const LIMIT = { perSecond: 2, burst: 3 };

describe("token bucket", () => {
  it("lets a full burst through, then refuses and says how long until the next token", () => {
    let bucket: Bucket | undefined;
    const answers = [0, 1, 2, 3].map(() => {
      const a = takeToken(bucket, 1_000, LIMIT);
      bucket = a.bucket;
      return [a.ok, a.remaining, a.waitMs];
    });
    expect(answers).toStrictEqual([
      [true, 2, 0],
      [true, 1, 0],
      [true, 0, 500],
      [false, 0, 500],
    ]);
  });

  it("refills at its rate on the clock it is given, never above the burst", () => {
    let bucket = takeToken(takeToken(takeToken(undefined, 0, LIMIT).bucket, 0, LIMIT).bucket, 0, LIMIT).bucket;
    const early = takeToken(bucket, 499, LIMIT);
    expect(early.ok).toBe(false);
    expect(early.waitMs).toBeCloseTo(1);
    const after = takeToken(bucket, 500, LIMIT);
    expect(after).toMatchObject({ ok: true, remaining: 0 });
    bucket = after.bucket;
    expect(peekToken(bucket, 3_600_000, LIMIT)).toMatchObject({ ok: true, remaining: 3, waitMs: 0 });
  });

  it("gains nothing when the clock goes back", () => {
    const spent = takeToken(takeToken(takeToken(undefined, 10_000, LIMIT).bucket, 10_000, LIMIT).bucket, 10_000, LIMIT).bucket;
    expect(takeToken(spent, 0, LIMIT).ok).toBe(false);
  });

  it("peeks without taking", () => {
    const one = takeToken(undefined, 0, { perSecond: 1, burst: 1 }).bucket;
    expect(peekToken(undefined, 0, { perSecond: 1, burst: 1 })).toMatchObject({ ok: true, remaining: 1 });
    expect(peekToken(one, 0, { perSecond: 1, burst: 1 })).toMatchObject({ ok: false, remaining: 0, waitMs: 1_000 });
    expect(peekToken(one, 0, { perSecond: 1, burst: 1 })).toMatchObject({ ok: false, remaining: 0, waitMs: 1_000 });
  });
});

describe("X-RateLimit-Reset", () => {
  it("is seconds as a decimal, as HCP Terraform writes it and go-tfe parses it (a float)", () => {
    expect(resetSeconds(0)).toBe("0.0");
    expect(resetSeconds(33.4)).toBe("0.034");
    expect(resetSeconds(2_000)).toBe("2.0");
    for (const ms of [0, 1, 33.4, 999.9, 12_345]) expect(Number.parseFloat(resetSeconds(ms))).toBeGreaterThanOrEqual(ms / 1000);
  });
});

describe("keyed limiter", () => {
  it("keeps at most maxKeys buckets whatever keys arrive (random tokens)", () => {
    const limiter = createKeyedLimiter({ perSecond: 1, burst: 1, maxKeys: 100, now: () => 0 });
    for (let i = 0; i < 10_000; i++) limiter.take(`token ${Math.random().toString(36)}-${i}`);
    expect(limiter.size).toBe(100);
  });

  it("drops the key used least recently, so a key still in use stays limited", () => {
    const limiter = createKeyedLimiter({ perSecond: 1, burst: 1, maxKeys: 3, now: () => 0 });
    expect(limiter.take("busy").ok).toBe(true);
    limiter.take("a");
    limiter.take("b");
    // "busy" knocks again (refused) and so becomes the most recent: "a" is dropped, not "busy".
    expect(limiter.take("busy").ok).toBe(false);
    limiter.take("c");
    expect(limiter.size).toBe(3);
    expect(limiter.take("busy").ok).toBe(false);
    expect(limiter.peek("a").ok).toBe(true);
  });

  it("hands a bucket over as it stands, and bounds what it is handed", () => {
    const from = createKeyedLimiter({ perSecond: 1, burst: 2, maxKeys: 2, now: () => 0 });
    const to = createKeyedLimiter({ perSecond: 1, burst: 2, maxKeys: 2, now: () => 0 });
    from.take("spent");
    from.take("spent");
    to.insert("spent", from.remove("spent"));
    expect([from.has("spent"), to.has("spent"), to.peek("spent").ok]).toStrictEqual([false, true, false]);
    // A key without a bucket arrives full; beyond maxKeys the least recently used goes.
    to.insert("new", from.remove("never-seen"));
    to.insert("newer", undefined);
    expect([to.size, to.has("spent"), to.peek("new").remaining]).toStrictEqual([2, false, 2]);
  });
});
