import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { ROUTE_PERMISSIONS } from "../../src/http/route-permissions.js";
import { callbackBody, runTaskApp, startedRun, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";

// A bounded fuzz of the whole API (issue 16, D26): every route with generated ids, query strings,
// bodies, content types and credentials. Every answer is below 500 and a JSON:API document (or
// empty), and a request that is refused changes nothing stored. The seed is fixed and printed.

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);

let a: RunTaskApp;
let db: Database.Database;
let dispose = (): void => undefined;
const known: Record<string, string[]> = {};

/** Every stored row, but API tokens' last use (an authenticated request records it, D22). */
function snapshot(): string {
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
  return JSON.stringify(
    tables.map((t) => (db.prepare(`SELECT * FROM "${t}" ORDER BY 1, 2`).all() as Record<string, unknown>[]).map(({ last_used_at: _, ...row }) => row)),
  );
}

beforeAll(async () => {
  db = new Database(":memory:");
  a = await runTaskApp({ name: "sqlite", create: () => ({ storage: createSqliteStorage(db), dispose() {} }) }, (d) => (dispose = d));
  const { runId, stageId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
  await a.call("PATCH", `/api/v2/task-results/${resultIds[1]}/callback`, { token: await tokenOf(a, resultIds[1]!), body: callbackBody("running") });
  const vars = await a.call("POST", "/api/v2/workspaces/ws-a/vars", { body: { data: { type: "vars", attributes: { key: "k", value: "v", category: "env" } } } });
  Object.assign(known, {
    run_id: [runId],
    task_stage_id: [stageId],
    task_result_id: resultIds,
    variable_id: [vars.json.data.id],
    workspace_id: ["ws-a", "ws-b"],
    policy_set_id: ["polset-a"],
    organization_name: ["acme", "other"],
  });
});
afterAll(async () => {
  await a.runplane.close();
  dispose();
});

const ROUTES = Object.keys(ROUTE_PERMISSIONS).map((r) => r.split(" ") as [string, string]);
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
    fc.oneof(fc.constantFrom("0", "1", "-1", "100", "101", "99999999999999999999", "1.5", "", "task_results", "run.workspace", "prj-a", "-created-at", "severity"), fc.string({ maxLength: 20 })),
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

describe("API fuzz (fixed seed)", () => {
  it("never answers 500, always answers JSON:API, and a refused request changes nothing stored", async () => {
    console.log(`API fuzz: seed ${SEED}, ${RUNS} runs (FUZZ_SEED / FUZZ_RUNS to change)`);
    const request = fc.record({ route: fc.constantFrom(...ROUTES), query, body, contentType, credential, seed: fc.nat() });
    await fc.assert(
      fc.asyncProperty(request, fc.context(), async (r, ctx) => {
        const [method, template] = r.route;
        let path = template;
        for (const name of template.match(/:(\w+)/g) ?? []) {
          const [value] = fc.sample(segment(name.slice(1)), { numRuns: 1, seed: r.seed + name.length });
          path = path.replace(name, value ?? "x");
        }
        const qs = r.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
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
});
