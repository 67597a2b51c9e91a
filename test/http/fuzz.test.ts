import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_PERMISSIONS } from "../../src/http/route-permissions.js";
import { agentTokenRoutes } from "../../src/http/routes/agent-tokens.js";
import { policySetParameterRoutes } from "../../src/http/routes/policy-set-parameters.js";
import { runTaskRoutes } from "../../src/http/routes/run-tasks.js";
import { taskStageRoutes } from "../../src/http/routes/task-stages.js";
import { teamProjectRoutes } from "../../src/http/routes/team-projects.js";
import { variableRoutes } from "../../src/http/routes/variables.js";
import { commentRoutes } from "../../src/http/routes/comments.js";
import { CREATED_PARAM, validBody, writeQuery } from "../helpers/fuzz-writes.js";
import { callbackBody, createTask, runTaskApp, startedRun, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";
import { snapshotSqlite } from "../helpers/sqlite-snapshot.js";

// A bounded fuzz of the whole API (D26): every route with generated ids, query strings,
// bodies, content types and credentials. Every answer is below 500 and a JSON:API document (or
// empty), and a request that is refused changes nothing stored (D30). The seed is fixed and printed.

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const WRITE_RUNS = Number(process.env.FUZZ_WRITE_RUNS ?? 600);

let a: RunTaskApp;
let snapshot: () => string;
let callbackToken: string;
let dispose = (): void => undefined;
const known: Record<string, string[]> = {};

beforeAll(async () => {
  const sqlite = snapshotSqlite();
  snapshot = sqlite.snapshot;
  a = await runTaskApp(sqlite.setup, (d) => (dispose = d));
  const { runId, stageId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
  callbackToken = await tokenOf(a, resultIds[1]!);
  await a.call("PATCH", `/api/v2/task-results/${resultIds[1]}/callback`, { token: callbackToken, body: callbackBody("running") });
  const vars = await a.call("POST", "/api/v2/workspaces/ws-a/vars", { body: { data: { type: "vars", attributes: { key: "k", value: "v", category: "env" } } } });
  await a.runplane.directory.agentPools.create({ id: "apool-a", name: "pool", organization: "acme" });
  const run = (await a.runplane.runTasks.getRun(runId))!;
  Object.assign(known, {
    run_id: [runId],
    plan_id: [run.planId],
    apply_id: [run.applyId],
    task_stage_id: [stageId],
    task_result_id: resultIds,
    variable_id: [vars.json.data.id],
    workspace_id: ["ws-a", "ws-b"],
    policy_set_id: ["polset-a"],
    organization_name: ["acme", "other"],
    agent_pool_id: ["apool-a"],
    task_id: [await createTask(a, "fuzzed")],
  });
});
afterAll(async () => {
  await a.runplane.close();
  dispose();
});

const ROUTES = Object.keys(ROUTE_PERMISSIONS).map((r) => r.split(" ") as [string, string]);
// The route objects, for the query each declares (D30).
const ALL_ROUTES = [...teamProjectRoutes, ...variableRoutes, ...policySetParameterRoutes, ...agentTokenRoutes, ...runTaskRoutes, ...taskStageRoutes, ...commentRoutes];
const nasty = fc.constantFrom("", "..", "%00", "%2F", "a".repeat(300), "ws-a%20", "%E2%80%AE", "-1", "1e309", "__proto__", "taskrs-0000000000000000");
// Mostly ids that exist, so requests get past the lookups to the parsing and the writes.
const segment = (name: string) =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...(known[name] ?? ["x"])), weight: 6 },
    { arbitrary: nasty, weight: 1 },
    { arbitrary: fc.string({ maxLength: 40 }).map(encodeURIComponent), weight: 1 },
  );
const query = fc.array(
  fc.tuple(
    fc.constantFrom("page[number]", "page[size]", "include", "filter[project][id]", "filter[team][id]", "filter[severity]", "filter[status]", "sort", "x"),
    fc.oneof(fc.constantFrom("0", "1", "-1", "100", "101", "99999999999999999999", "1.5", "", "task_results", "run.workspace", "prj-a", "-created-at", "severity", "nope", "workspace_tasks"), fc.string({ maxLength: 20 })),
  ),
  { maxLength: 4 },
);
const nested = fc.integer({ min: 60, max: 3000 }).map((d) => "[".repeat(d) + "]".repeat(d));
const body = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify({ data: v })),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.record({ type: fc.constantFrom("vars", "tasks", "team-projects", "task-results", "workspace-tasks", "authentication-tokens"), attributes: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 })) }).map((d) => JSON.stringify({ data: d })),
  fc.string({ maxLength: 200 }),
  nested,
  fc.constant(""),
);
const contentType = fc.constantFrom("application/vnd.api+json", "application/json", "text/plain", "application/vnd.api+json; charset=utf-8", "");
type Credential = "owner" | "dev" | "other" | "none" | "garbage" | "result";
const credential = fc.oneof(
  { arbitrary: fc.constant<Credential>("owner"), weight: 5 },
  { arbitrary: fc.constantFrom<Credential>("dev", "other", "none", "garbage", "result"), weight: 3 },
);

/** The template with each `:param` filled from `segment`, deterministically from `seed`. */
function pathFor(template: string, seed: number): string {
  let path = template;
  for (const name of template.match(/:(\w+)/g) ?? []) {
    const [value] = fc.sample(segment(name.slice(1)), { numRuns: 1, seed: seed + name.length });
    path = path.replace(name, value ?? "x");
  }
  return path;
}
const queryString = (pairs: readonly (readonly [string, string])[]): string =>
  pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");

describe("API fuzz (fixed seed)", () => {
  it("never answers 500, always answers JSON:API, and a refused request changes nothing stored", async () => {
    console.log(`API fuzz: seed ${SEED}, ${RUNS} runs (FUZZ_SEED / FUZZ_RUNS to change)`);
    const request = fc.record({ route: fc.constantFrom(...ROUTES), query, body, contentType, credential, seed: fc.nat() });
    await fc.assert(
      fc.asyncProperty(request, fc.context(), async (r, ctx) => {
        const [method, template] = r.route;
        const path = pathFor(template, r.seed);
        const qs = queryString(r.query);
        const token = { owner: a.ownerToken, dev: a.devToken, other: a.otherOrgToken, none: null, garbage: "at-garbage.garbage", result: "not-a-result-token" }[r.credential];
        const before = snapshot();
        const res = await a.call(method, `/api/v2${path}${qs ? `?${qs}` : ""}`, {
          token,
          ...(method === "GET" || method === "DELETE" ? {} : { raw: r.body, contentType: r.contentType }),
        });
        ctx.log(`${method} ${path}?${qs} -> ${res.status}`);
        expect(res.status).toBeLessThan(500);
        if (res.text !== "" && res.headers.get("content-type")?.includes("json")) expect(() => JSON.parse(res.text)).not.toThrow();
        if (res.status >= 400) {
          expect(res.json?.errors?.[0]?.status).toBe(String(res.status));
          expect(snapshot()).toBe(before);
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  }, 60_000);

  // decision D30: a write whose body is valid, refused for its query (or path, or credential),
  // stores nothing; one that succeeds makes its new id known to the writes after it.
  it("stores nothing for a write refused for any part of its request, valid body or not", async () => {
    console.log(`API write fuzz: seed ${SEED}, ${WRITE_RUNS} runs (FUZZ_SEED / FUZZ_WRITE_RUNS to change)`);
    // Half the draws are writes that take query parameters (includes on the answer): they can be refused for one.
    const writes = ALL_ROUTES.filter((route) => route.method !== "GET");
    const route = fc.oneof(
      { arbitrary: fc.constantFrom(...writes.filter((w) => w.query)), weight: 1 },
      { arbitrary: fc.constantFrom(...writes.filter((w) => !w.query)), weight: 1 },
    ).map((w) => [w.method, w.path] as const);
    const request = fc.record({ route, query: writeQuery, validBody: fc.nat(9), body, owner: fc.nat(9), seed: fc.nat() });
    const tally = { written: 0, refusedForQuery: 0 };
    await fc.assert(
      fc.asyncProperty(request, fc.context(), async (r, ctx) => {
        const [method, template] = r.route;
        const key = `${method} ${template}`;
        const path = pathFor(template, r.seed);
        const qs = queryString(r.query);
        const valid = validBody(key, known);
        const [generated] = valid && r.validBody > 0 ? fc.sample(valid, { numRuns: 1, seed: r.seed }) : [undefined];
        const callback = template.endsWith("/callback");
        const before = snapshot();
        const res = await a.call(method, `/api/v2${path}${qs ? `?${qs}` : ""}`, {
          token: callback ? callbackToken : r.owner > 0 ? a.ownerToken : a.devToken,
          ...(method === "DELETE" ? {} : generated !== undefined ? { body: generated } : { raw: r.body }),
        });
        ctx.log(`${method} ${path}?${qs} -> ${res.status} ${res.text.slice(0, 200)}`);
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) {
          expect(res.json?.errors?.[0]?.status).toBe(String(res.status));
          expect(snapshot()).toBe(before);
          if (res.json.errors[0].source?.parameter !== undefined) tally.refusedForQuery++;
        } else if (res.status < 300) {
          tally.written++;
          const param = CREATED_PARAM[key];
          if (param && res.json?.data?.id) (known[param] ??= []).push(res.json.data.id);
        }
      }),
      { seed: SEED, numRuns: WRITE_RUNS, endOnFailure: true },
    );
    console.log(`API write fuzz: ${tally.written} writes made, ${tally.refusedForQuery} refused for a query parameter`);
    // The property means something only if writes got through and queries refused others.
    expect(tally.written).toBeGreaterThan(WRITE_RUNS / 10);
    expect(tally.refusedForQuery).toBeGreaterThan(WRITE_RUNS / 20);
  }, 60_000);
});
