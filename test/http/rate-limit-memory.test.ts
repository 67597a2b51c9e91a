import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createRateLimit } from "../../src/http/rate-limit.js";
import type { Route } from "../../src/http/types.js";

// Decision D33: whatever an outsider sends (random tokens, random long paths, random result ids in
// callback URLs), the limiter holds at most maxKeys buckets per limiter, each under a short key.

const route = (path: string): Route => ({ method: "GET", path, auth: "principal", handle: async () => ({ status: 200 }) });
const VARS = route("/workspaces/:workspace_id/vars");
const CALLBACK = route("/task-results/:task_result_id/callback");
const random = (bytes: number) => randomBytes(bytes).toString("base64url");

describe("rate limit memory (D33)", () => {
  it("stays within 2 x maxKeys buckets under 10,000 distinct tokens, paths and result ids", () => {
    const limit = createRateLimit({ maxKeys: 100 }, () => 0);
    for (let i = 0; i < 10_000; i++) {
      const token = new Request(`http://localhost/api/v2/workspaces/ws-a/vars`, { headers: { authorization: `Bearer ${random(24)}` } });
      limit.admit(token, VARS, {}, new URL(token.url));
      const anonymous = new URL(`http://localhost/api/v2/workspaces/${random(3_000)}/vars`);
      limit.admit(new Request(anonymous), VARS, {}, anonymous);
      const callback = new URL(`http://localhost/api/v2/task-results/${random(3_000)}/callback`);
      limit.admit(new Request(callback, { method: "PATCH" }), CALLBACK, { task_result_id: callback.pathname.split("/")[4]! }, callback);
    }
    expect(limit.size).toBe(200);
  });

  it("keeps limiting a credential that is in use while others come and go", () => {
    const limit = createRateLimit({ requestsPerSecond: 1, maxKeys: 10 }, () => 0);
    const mine = new Request("http://localhost/api/v2/workspaces/ws-a/vars", { headers: { authorization: "Bearer mine" } });
    const url = new URL(mine.url);
    limit.admit(mine, VARS, {}, url);
    for (let i = 0; i < 1_000; i++) {
      expect(() => limit.admit(mine, VARS, {}, url)).toThrow("You have exceeded the API's rate limit.");
      const other = new Request(mine.url, { headers: { authorization: `Bearer ${random(12)}` } });
      limit.admit(other, VARS, {}, url);
    }
  });
});
