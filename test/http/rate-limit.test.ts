import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createDispatcher } from "../../src/index.js";
import { answering200, createTestApp, type TestApp } from "../helpers/app.js";
import { attachTask, callbackBody, createTask, sendCallback } from "../helpers/run-tasks.js";
import { manualClock, type ManualClock } from "../delivery/support.js";
import type { RateLimitOptions } from "../../src/index.js";

// Decision D33: requests are limited per credential as HCP Terraform limits them (429 with
// X-RateLimit-Limit, X-RateLimit-Reset and Retry-After), /ping tells go-tfe the figure, and task
// result callbacks count per result instead. The clock stands still until the test moves it.

let a: TestApp & { clock: ManualClock };
afterEach(() => a.runplane.close());

async function limitedApp(rateLimit: RateLimitOptions | false | undefined, transport = answering200()) {
  const clock = manualClock();
  a = Object.assign(await createTestApp({ clock, transport, ...(rateLimit === undefined ? {} : { rateLimit }) }), { clock });
  return a;
}

const VARS = "/api/v2/workspaces/ws-a/vars";

describe("per-credential rate limit (D33)", () => {
  it("answers 429 with X-RateLimit-Limit, X-RateLimit-Reset and Retry-After once a credential's burst is spent", async () => {
    await limitedApp({ requestsPerSecond: 5 });
    for (let i = 4; i >= 0; i--) {
      const ok = await a.call("GET", VARS);
      expect(ok.status).toBe(200);
      expect([ok.headers.get("x-ratelimit-limit"), ok.headers.get("x-ratelimit-remaining")]).toStrictEqual(["5", String(i)]);
    }
    const refused = await a.call("GET", VARS);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toBe("application/vnd.api+json");
    expect(refused.json.errors).toStrictEqual([{ status: "429", title: "too many requests", detail: "You have exceeded the API's rate limit." }]);
    expect(refused.headers.get("x-ratelimit-limit")).toBe("5");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(refused.headers.get("x-ratelimit-reset")).toBe("0.2");
    expect(refused.headers.get("retry-after")).toBe("1");
    // A write is refused before anything is read or stored (D30).
    const write = await a.call("POST", VARS, { body: { data: { type: "vars", attributes: { key: "k", value: "v", category: "env" } } } });
    expect(write.status).toBe(429);
    expect((await a.runplane.variables.list("ws-a")).total).toBe(0);
    // The bucket refills on the clock: one more request every 200 ms.
    a.clock.advance(199);
    expect((await a.call("GET", VARS)).status).toBe(429);
    a.clock.advance(1);
    expect((await a.call("GET", VARS)).status).toBe(200);
  });

  it("keeps each credential apart: one token spent, another still served", async () => {
    await limitedApp({ requestsPerSecond: 2 });
    for (let i = 0; i < 2; i++) expect((await a.call("GET", VARS)).status).toBe(200);
    expect((await a.call("GET", VARS)).status).toBe(429);
    const other = await a.call("GET", "/api/v2/organizations/other/tasks", { token: a.otherOrgToken });
    expect(other.status).toBe(200);
    expect(other.headers.get("x-ratelimit-remaining")).toBe("1");
    // Requests without a credential count against their path, not against anyone's token.
    expect((await a.call("GET", VARS, { token: null })).status).toBe(401);
    expect((await a.call("GET", VARS, { token: null })).status).toBe(401);
    expect((await a.call("GET", VARS, { token: null })).status).toBe(429);
    expect((await a.call("GET", "/api/v2/organizations/other/tasks", { token: a.otherOrgToken })).status).toBe(200);
  });

  it("counts a read answered from the read cache like any other", async () => {
    await limitedApp({ requestsPerSecond: 3, burst: 2 });
    expect((await a.call("GET", VARS)).status).toBe(200);
    expect((await a.call("GET", VARS)).status).toBe(200);
    expect((await a.call("GET", VARS)).status).toBe(429);
  });

  it("is off unless asked for: no 429 and no X-RateLimit headers", async () => {
    for (const option of [undefined, false] as const) {
      if (option === false) await a.runplane.close();
      await limitedApp(option);
      for (let i = 0; i < 60; i++) {
        const res = await a.call("GET", VARS);
        expect(res.status).toBe(200);
        expect(res.headers.get("x-ratelimit-limit")).toBeNull();
      }
      const ping = await a.call("GET", "/api/v2/ping");
      expect(ping.headers.get("x-ratelimit-limit")).toBeNull();
    }
  });
});

describe("tokens that have not authenticated yet (D33)", () => {
  const bogus = (i: number) => `bogus-token-${i}`;

  it("limits a flood of distinct bogus tokens together, while a token that has authenticated is served", async () => {
    await limitedApp({ requestsPerSecond: 5 });
    // The owner's token authenticates once, before the flood.
    expect((await a.call("GET", VARS)).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await a.call("GET", VARS, { token: bogus(i) })).status);
    // Unverified requests share one bucket of 10 x requestsPerSecond (50 at once; the owner's first took one).
    expect(statuses.filter((s) => s === 401)).toHaveLength(49);
    expect(statuses.slice(49)).toStrictEqual(Array(11).fill(429));
    expect((await a.call("GET", VARS)).status).toBe(200);
    // A new legitimate token competes with the flood until it has authenticated once ...
    expect((await a.call("GET", VARS, { token: a.devToken })).status).toBe(429);
    a.clock.advance(20);
    expect((await a.call("GET", VARS, { token: a.devToken })).status).toBe(404);
    for (let i = 60; i < 70; i++) await a.call("GET", VARS, { token: bogus(i) });
    // ... and not after: its answer (404, D4: no permission) proved the token.
    expect((await a.call("GET", VARS, { token: a.devToken })).status).toBe(404);
  });

  it("keeps a real token's spent bucket however many junk tokens come (maxKeys 10)", async () => {
    await limitedApp({ maxKeys: 10 });
    for (let i = 0; i < 30; i++) expect((await a.call("GET", VARS)).status).toBe(200);
    expect((await a.call("GET", VARS)).status).toBe(429);
    for (let i = 0; i < 10; i++) expect((await a.call("GET", VARS, { token: bogus(i) })).status).toBe(401);
    expect((await a.call("GET", VARS)).status).toBe(429);
  });

  it("takes no answer of a public route as proof of a token", async () => {
    await limitedApp({ requestsPerSecond: 2 });
    const junk = "junk-token";
    expect((await a.call("GET", "/api/v2/logs/not-a-capability", { token: junk })).status).toBe(404);
    expect((await a.call("GET", "/api/v2/ping", { token: junk })).status).toBe(204);
    for (let i = 0; i < 19; i++) expect((await a.call("GET", VARS, { token: bogus(i) })).status).toBe(401);
    // Still unverified: the shared bucket is spent, so the junk token is refused, not served.
    expect((await a.call("GET", VARS, { token: junk })).status).toBe(429);
  });
});

describe("unknown paths (D33)", () => {
  it("count against the credential, with the X-RateLimit headers", async () => {
    await limitedApp({ requestsPerSecond: 5 });
    for (let i = 4; i >= 0; i--) {
      const missing = await a.call("GET", "/api/v2/organizations/acme");
      expect(missing.status).toBe(404);
      expect([missing.headers.get("x-ratelimit-limit"), missing.headers.get("x-ratelimit-remaining")]).toStrictEqual(["5", String(i)]);
    }
    expect((await a.call("GET", "/api/v2/organizations/acme")).status).toBe(429);
    // A known route of the same credential: the same spent bucket.
    expect((await a.call("GET", VARS)).status).toBe(429);
  });

  it("count without a token under one key, not per invented path, and a wrong method or a path outside the API too", async () => {
    await limitedApp({ requestsPerSecond: 3 });
    expect((await a.call("GET", "/api/v2/nothing/1", { token: null })).status).toBe(404);
    expect((await a.call("DELETE", "/api/v2/ping", { token: null })).status).toBe(405);
    const outside = await a.call("GET", "/elsewhere", { token: null });
    expect([outside.status, outside.headers.get("x-ratelimit-remaining")]).toStrictEqual([404, "0"]);
    expect((await a.call("GET", "/api/v2/nothing/4", { token: null })).status).toBe(429);
  });
});

describe("log URLs (D33, D32)", () => {
  const PLAN_LOG = "Terraform v1.9.8\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n";

  it("limit tokenless reads per log URL: reading in 1-byte chunks is refused at the 31st request, another log's URL is not", async () => {
    const clock = manualClock();
    a = Object.assign(await createTestApp({ clock, rateLimit: {}, artifacts: { planLog: () => PLAN_LOG, applyLog: () => PLAN_LOG } }), { clock });
    const { run } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    const urlOf = async (what: string) => new URL((await a.call("GET", `/api/v2/runs/${run.id}/${what}`)).json.data.attributes["log-read-url"] as string);
    const [plan, apply] = [await urlOf("plan"), await urlOf("apply")];
    const chunk = (url: URL, offset: number) => a.runplane.handler(new Request(`${url.origin}${url.pathname}?limit=1&offset=${offset}`));
    for (let offset = 0; offset < 30; offset++) expect((await chunk(plan, offset)).status).toBe(200);
    const refused = await chunk(plan, 30);
    expect([refused.status, refused.headers.get("retry-after")]).toStrictEqual([429, "1"]);
    expect((await chunk(apply, 0)).status).toBe(200);
  });

  it("count a verified capability in its log's own bucket: a flood of invented tokens or forged capabilities delays no reader", async () => {
    const clock = manualClock();
    a = Object.assign(await createTestApp({ clock, rateLimit: { requestsPerSecond: 5 }, artifacts: { planLog: () => PLAN_LOG, applyLog: () => PLAN_LOG } }), { clock });
    const { run } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    const plan = new URL((await a.call("GET", `/api/v2/runs/${run.id}/plan`)).json.data.attributes["log-read-url"] as string);
    const read = (url: URL | string, offset: number) => a.runplane.handler(new Request(`${url.toString().split("?")[0]}?limit=1&offset=${offset}`));
    const [, , mac] = plan.pathname.split("/").at(-1)!.split(".");
    // Forged: the same payload under a MAC of the right shape that nobody signed, one per request.
    const forged = (i: number) => `${plan.origin}${plan.pathname.slice(0, -mac!.length)}${String(i).padStart(43, "A")}`;
    const floods: [string, (i: number) => Promise<number>][] = [
      ["invented tokens", async (i) => (await a.call("GET", VARS, { token: `invented-${i}` })).status],
      ["forged capabilities", async (i) => (await read(forged(i), 0)).status],
    ];
    for (const [what, flood] of floods) {
      // Until the anonymous bucket (10 x 5) is spent: bounded, a limiter that never refuses fails here.
      let status = 0;
      for (let i = 0; i < 200 && status !== 429; i++) status = await flood(i);
      expect(status, what).toBe(429);
      // Every read of the valid log URL is served, within its own burst (5), while the flood goes on.
      for (let offset = 0; offset < 5; offset++) {
        expect((await read(plan, offset)).status, `${what}: read ${offset}`).toBe(200);
        expect(await flood(1_000 + offset), what).toBe(429);
      }
      a.clock.advance(10_000);
    }
    // The log's own bucket still limits its readers.
    for (let offset = 0; offset < 5; offset++) expect((await read(plan, offset)).status).toBe(200);
    expect((await read(plan, 5)).status).toBe(429);
  });

  it("are documented with their 429 in docs/reference/endpoints.md", () => {
    const row = readFileSync(new URL("../../docs/reference/endpoints.md", import.meta.url), "utf8")
      .split("\n")
      .find((line) => line.startsWith("| `GET /logs/:capability` |"))!;
    expect(row.split("|").at(-2)).toMatch(/\b429\b/);
    expect(row).toMatch(/31st/);
  });
});

describe("GET /ping (D33)", () => {
  it("answers 204 with TFP-API-Version, and the caller's rate-limit headers when the limit is on", async () => {
    await limitedApp({});
    const ping = await a.call("GET", "/api/v2/ping");
    expect(ping.status).toBe(204);
    expect(ping.headers.get("tfp-api-version")).toBe("2.6");
    // HCP Terraform's documented figure, from which go-tfe builds its client-side limiter.
    expect(ping.headers.get("x-ratelimit-limit")).toBe("30");
    expect(ping.headers.get("x-ratelimit-remaining")).toBe("30");
    expect(ping.headers.get("x-ratelimit-reset")).toBe("0.0");
  });

  it("is never refused, even for a spent credential, and takes nothing from it", async () => {
    await limitedApp({ requestsPerSecond: 1 });
    for (let i = 0; i < 5; i++) expect((await a.call("GET", "/api/v2/ping")).status).toBe(204);
    expect((await a.call("GET", VARS)).status).toBe(200);
    expect((await a.call("GET", VARS)).status).toBe(429);
    const ping = await a.call("GET", "/api/v2/ping");
    expect(ping.status).toBe(204);
    expect(ping.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(ping.headers.get("x-ratelimit-reset")).toBe("1.0");
    // A HEAD probe (load balancers) carries the same headers.
    const head = await a.runplane.handler(new Request("http://localhost/api/v2/ping", { method: "HEAD" }));
    expect([head.status, head.headers.get("tfp-api-version"), head.headers.get("x-ratelimit-limit")]).toStrictEqual([204, "2.6", "1"]);
  });

  it("carries TFP-API-Version with the limit off too", async () => {
    await limitedApp(undefined);
    expect((await a.call("GET", "/api/v2/ping")).headers.get("tfp-api-version")).toBe("2.6");
  });
});

describe("task result callbacks (D33)", () => {
  /** Two results of one started stage, their requests sent (which opens their callbacks), and their tokens. */
  async function twoResults(rateLimit: RateLimitOptions) {
    const transport = answering200();
    await limitedApp(rateLimit, transport);
    for (const name of ["lint", "scan"]) await attachTask(a, await createTask(a, name), "advisory");
    const { run } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    await a.runplane.runTasks.startStage(run.id, "post_plan");
    await createDispatcher(a.runplane, { random: () => 0, owner: "test" }).tick();
    const sent = transport.sent.map((r) => JSON.parse(typeof r.body === "string" ? r.body : new TextDecoder().decode(r.body)) as Record<string, string>).filter((b) => b.access_token !== "test-token");
    return sent.map((b) => ({ id: b.task_result_id!, token: b.access_token! }));
  }

  it("count per result: one result's flood leaves another's callback and the API credentials alone", async () => {
    const [flooded, quiet] = await twoResults({ requestsPerSecond: 100, callbacksPerSecond: 0.01, callbackBurst: 2 });
    const first = await sendCallback(a, flooded!.id, flooded!.token, callbackBody("running"));
    expect(first.status).toBe(200);
    expect([first.headers.get("x-ratelimit-limit"), first.headers.get("x-ratelimit-remaining")]).toStrictEqual(["0.01", "1"]);
    expect((await sendCallback(a, flooded!.id, flooded!.token, callbackBody("running"))).status).toBe(200);
    const refused = await sendCallback(a, flooded!.id, flooded!.token, callbackBody("passed"));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("100");
    expect(refused.headers.get("x-ratelimit-reset")).toBe("100.0");
    expect((await a.runplane.runTasks.getResult(flooded!.id))!.status).toBe("running");
    // Another result of the same integration and stage is not slowed.
    expect((await sendCallback(a, quiet!.id, quiet!.token, callbackBody("passed"))).status).toBe(200);
    // Callbacks took nothing from a credential's bucket (the access token's included).
    const ping = await a.call("GET", "/api/v2/ping", { token: flooded!.token });
    expect(ping.headers.get("x-ratelimit-remaining")).toBe("100");
    // Refilled after 100 s: the flooded result may finish.
    a.clock.advance(100_000);
    expect((await sendCallback(a, flooded!.id, flooded!.token, callbackBody("passed"))).status).toBe(200);
  });

  it("count per token too: a flood without the result's token never spends the integration's allowance", async () => {
    const [result] = await twoResults({ requestsPerSecond: 5, callbacksPerSecond: 0.01, callbackBurst: 2 });
    // Anyone who learns the result id: no token, a made-up one, a new one each time.
    for (let i = 0; i < 12; i++) {
      const token = i % 3 === 0 ? null : i % 3 === 1 ? "made-up" : `made-up-${i}`;
      expect([401, 429]).toContain((await sendCallback(a, result!.id, token, callbackBody("running"))).status);
    }
    expect((await sendCallback(a, result!.id, "made-up", callbackBody("running"))).status).toBe(429);
    // The integration's own callbacks still have their whole burst.
    expect((await sendCallback(a, result!.id, result!.token, callbackBody("running"))).status).toBe(200);
    expect((await sendCallback(a, result!.id, result!.token, callbackBody("passed"))).status).toBe(200);
    expect((await a.runplane.runTasks.getResult(result!.id))!.status).toBe("passed");
  });

  it("are not limited by a spent API credential", async () => {
    const [result] = await twoResults({ requestsPerSecond: 20, callbacksPerSecond: 1, callbackBurst: 10 });
    // Bounded: a limiter that never refuses fails here instead of looping forever.
    let status = 0;
    for (let i = 0; i < 100 && status !== 429; i++) status = (await a.call("GET", VARS)).status;
    expect(status).toBe(429);
    expect((await sendCallback(a, result!.id, result!.token, callbackBody("passed"))).status).toBe(200);
  });
});
