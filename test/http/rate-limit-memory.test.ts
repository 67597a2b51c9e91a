import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createRateLimit, type RateLimit } from "../../src/http/rate-limit.js";
import type { Route } from "../../src/http/types.js";

// Decision D33: whatever an outsider sends (random tokens, random long paths, random result ids in
// callback URLs), the limiter holds at most maxKeys buckets per limiter (verified tokens, the rest,
// callbacks by result and token, callbacks whose token their result accepted), each under a short key; junk can push out neither a verified token's bucket nor its
// place among the verified.

const route = (path: string, auth: Route["auth"] = "principal"): Route => ({ method: "GET", path, auth, handle: async () => ({ status: 200 }) });
const VARS = route("/workspaces/:workspace_id/vars");
const CALLBACK = route("/task-results/:task_result_id/callback", "custom");
const random = (bytes: number) => randomBytes(bytes).toString("base64url");
const URL_VARS = "http://localhost/api/v2/workspaces/ws-a/vars";
const bearer = (token: string) => new Request(URL_VARS, { headers: { authorization: `Bearer ${token}` } });

/** Sends a request and answers it with `status`; the 429's message, or the status, comes back. */
function send(limit: RateLimit, request: Request, to: Route | null, status: number): number | string {
  try {
    limit.admit(request, to, {}, new URL(request.url)).answered(status);
    return status;
  } catch (error) {
    return (error as Error).message;
  }
}
const REFUSED = "You have exceeded the API's rate limit.";

/**
 * These loops are synchronous, so vitest's timeout cannot stop them: each checks a deadline itself,
 * and a regression (a limiter that never refuses, a slow eviction) fails in seconds, not hangs CI.
 */
function deadline(ms: number): () => void {
  const end = performance.now() + ms;
  return () => {
    if (performance.now() > end) throw new Error(`still running after ${ms} ms: the limiter regressed`);
  };
}

describe("rate limit memory (D33)", () => {
  it("stays within 4 x maxKeys buckets under 10,000 distinct verified tokens, bogus tokens, paths, unknown paths, result ids and callback tokens", () => {
    let t = 0;
    const limit = createRateLimit({ maxKeys: 100 }, () => t);
    const inTime = deadline(15_000);
    for (let i = 0; i < 10_000; i++) {
      inTime();
      // Bounded all along, not only at the end: a limiter that keeps every key fails at once.
      expect(limit.size).toBeLessThanOrEqual(400);
      t += 1_000;
      expect(send(limit, bearer(random(24)), VARS, 200)).toBe(200);
      expect(send(limit, bearer(random(24)), VARS, 401)).toBe(401);
      const anonymous = new URL(`http://localhost/api/v2/workspaces/${random(3_000)}/vars`);
      limit.admit(new Request(anonymous), VARS, {}, anonymous).answered(401);
      // Unknown paths without a token share one key, whatever path is invented.
      limit.admit(new Request(anonymous), null, {}, anonymous).answered(404);
      const callback = new URL(`http://localhost/api/v2/task-results/${random(3_000)}/callback`);
      const resultId = { task_result_id: callback.pathname.split("/")[4]! };
      limit.admit(new Request(callback, { method: "PATCH" }), CALLBACK, resultId, callback).answered(401);
      // A callback its result accepted proves its token for that result.
      const accepted = new Request(callback, { method: "PATCH", headers: { authorization: `Bearer ${random(24)}` } });
      limit.admit(accepted, CALLBACK, resultId, callback).answered(200);
    }
    // Each limiter full, the last promotion having just left one place among the unproven callbacks.
    expect(limit.size).toBe(399);
  });

  it("keeps limiting a verified credential however many bogus tokens come and go", () => {
    let t = 0;
    const limit = createRateLimit({ requestsPerSecond: 1, maxKeys: 10 }, () => t);
    const inTime = deadline(5_000);
    for (let round = 0; round < 100; round++) {
      inTime();
      t += 1_000; // one more request for "mine", ten more for the shared bucket
      expect(send(limit, bearer("mine"), VARS, 200)).toBe(200);
      for (let i = 0; i < 9; i++) {
        expect(send(limit, bearer("mine"), VARS, 200)).toBe(REFUSED);
        expect(send(limit, bearer(random(12)), VARS, 401)).toBe(401);
      }
    }
  });

  it("limits bogus tokens together: beyond the shared bucket none is served", () => {
    const limit = createRateLimit({ requestsPerSecond: 1, unverifiedPerSecond: 5 }, () => 0);
    const answers = Array.from({ length: 8 }, () => send(limit, bearer(random(12)), VARS, 401));
    expect(answers).toStrictEqual([401, 401, 401, 401, 401, REFUSED, REFUSED, REFUSED]);
  });
});

describe("what proves a token (D33)", () => {
  /** Whether `token` is still served once the shared bucket is spent: only a verified token is. */
  function verifiedAfter(to: Route | null, status: number): boolean {
    const limit = createRateLimit({ requestsPerSecond: 2, unverifiedPerSecond: 3 }, () => 0);
    send(limit, bearer("token"), to, status);
    // Bounded: the shared bucket holds 3; a limiter that never refuses fails the expectation below.
    let spent = false;
    for (let i = 0; i < 100 && !spent; i++) spent = send(limit, bearer(`spender-${i}`), VARS, 401) === REFUSED;
    expect(spent, "the shared bucket refuses once spent").toBe(true);
    return send(limit, bearer("token"), VARS, 200) === 200;
  }

  it("is an answer of a principal route other than 401, below 500", () => {
    for (const status of [200, 204, 400, 404, 409, 422, 429]) expect(verifiedAfter(VARS, status), String(status)).toBe(true);
    for (const status of [401, 500, 503]) expect(verifiedAfter(VARS, status), String(status)).toBe(false);
  });

  it("is only a success of a custom route, which may check its query or body before the token", () => {
    const artifact = route("/plans/:plan_id", "custom");
    for (const status of [200, 204, 302]) expect(verifiedAfter(artifact, status)).toBe(true);
    for (const status of [400, 404, 413, 401, 503]) expect(verifiedAfter(artifact, status)).toBe(false);
  });

  it("is never an answer of a public route, of a callback or to an unknown path", () => {
    for (const to of [route("/logs/:capability", "none"), route("/ping", "none"), CALLBACK, null]) expect(verifiedAfter(to, 200), to?.path ?? "unknown path").toBe(false);
  });

  it("is taken back by a 401, keeping the spent bucket", () => {
    const limit = createRateLimit({ requestsPerSecond: 3, unverifiedPerSecond: 4 }, () => 0);
    expect(send(limit, bearer("revoked"), VARS, 200)).toBe(200);
    expect(send(limit, bearer("revoked"), VARS, 401)).toBe(401);
    // Its own bucket holds the one request left, not a fresh three ...
    expect(send(limit, bearer("revoked"), VARS, 401)).toBe(401);
    expect(send(limit, bearer("revoked"), VARS, 401)).toBe(REFUSED);
    // ... and it took from the shared bucket again (4: its first request and the third).
    expect([1, 2, 3].map((i) => send(limit, bearer(`bogus-${i}`), VARS, 401))).toStrictEqual([401, 401, REFUSED]);
  });
});
