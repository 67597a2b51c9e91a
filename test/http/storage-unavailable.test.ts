import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { ROUTE_PERMISSIONS } from "../../src/http/route-permissions.js";
import { runEventId } from "../../src/domain/run-events.js";
import { createKeyring, createResultsPage, generateKey, silentLogger } from "../../src/index.js";
import { createTestApp, varsBody, type TestResponse } from "../helpers/app.js";
import { gatedStorage, type GatedStorage } from "../helpers/gated-storage.js";
import { attachTask, callbackBody, createTask, fakeClock, outcomeItem, sendCallback, startedRun, taskBody, tokenOf, workspaceTaskBody, type RunTaskApp } from "../helpers/run-tasks.js";

// Decision D28: a storage that cannot be reached is 503 with Retry-After and the JSON:API error
// document on every route, never 500, whichever of a request's storage calls is the first to fail.
// Every route is swept: the storage goes away at its first call, then at its second, and so on,
// until the request no longer reaches the failing call.

interface Target {
  path: string;
  body?: unknown;
  /** Bearer token; default the owner's API token. */
  token?: string | null;
}

interface World {
  app: RunTaskApp;
  gate: GatedStorage;
  runId: string;
  target(route: string): Target;
}

const FAILS_WITHOUT_STORAGE = new Set(["GET /ping"]);

async function world(): Promise<World> {
  const gate = gatedStorage(createMemoryStorage());
  const keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
  const clock = fakeClock();
  const base = await createTestApp({
    storage: gate.storage,
    keyring,
    clock,
    publicUrl: "https://runplane.example",
    runs: { policyChecks: (r) => [{ id: `polchk-${r.id}`, status: "passed" }], policyCheckRun: (id) => id.replace(/^polchk-/, "") },
    artifacts: {
      planJson: async () => ({ format_version: "1.2" }),
      configurationVersion: async () => "tarball",
      planLog: async () => "planned",
      applyLog: async () => "applied",
    },
  });
  const app: RunTaskApp = Object.assign(base, { keyring, clock });
  const { runId, stageId, resultIds } = await startedRun(app, ["mandatory", "advisory"]);
  const accessToken = await tokenOf(app, resultIds[0]!);
  const callbackToken = await tokenOf(app, resultIds[1]!);
  await sendCallback(app, resultIds[0]!, accessToken, callbackBody("running", {}, [outcomeItem("o1", { body: "# finding" })]));
  const outcomeId = (await app.call("GET", `/api/v2/task-results/${resultIds[0]}/outcomes`)).json.data[0].id as string;
  const run = (await app.runplane.runTasks.getRun(runId))!;
  const logUrl = (await app.call("GET", `/api/v2/plans/${run.planId}`)).json.data.attributes["log-read-url"] as string;
  const variableId = (await app.runplane.variables.create("ws-a", { key: "k", value: "v", category: "env" })).id;
  const parameterId = (await app.runplane.policySetParameters.create("polset-a", { key: "p", category: "policy-set" })).id;
  const grantId = (await app.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" })).id;
  await app.runplane.directory.agentPools.create({ id: "apool-a", name: "pool", organization: "acme" });
  const agentTokenId = (await app.runplane.agentTokens.create("apool-a", { description: "d", createdBy: { type: "organizations", id: "acme" } })).id;
  const taskId = await createTask(app, "extra");
  const workspaceTaskId = await attachTask(app, taskId, "advisory");
  const commentId = (await app.call("POST", `/api/v2/runs/${runId}/comments`, { body: { data: { type: "comments", attributes: { body: "seen" } } } })).json.data.id as string;

  const vars = "/api/v2/workspaces/ws-a/vars";
  const params = "/api/v2/policy-sets/polset-a/parameters";
  const tp = "/api/v2/team-projects";
  const targets: Record<string, Target> = {
    "GET /ping": { path: "/api/v2/ping" },
    "GET /workspaces/:workspace_id/vars": { path: vars },
    "GET /workspaces/:workspace_id/vars/:variable_id": { path: `${vars}/${variableId}` },
    "POST /workspaces/:workspace_id/vars": { path: vars, body: varsBody({ key: "new", value: "v", category: "env" }) },
    "PATCH /workspaces/:workspace_id/vars/:variable_id": { path: `${vars}/${variableId}`, body: varsBody({ value: "w" }) },
    "DELETE /workspaces/:workspace_id/vars/:variable_id": { path: `${vars}/${variableId}` },
    "GET /policy-sets/:policy_set_id/parameters": { path: params },
    "GET /policy-sets/:policy_set_id/parameters/:parameter_id": { path: `${params}/${parameterId}` },
    "POST /policy-sets/:policy_set_id/parameters": { path: params, body: varsBody({ key: "new", value: "v", category: "policy-set" }) },
    "PATCH /policy-sets/:policy_set_id/parameters/:parameter_id": { path: `${params}/${parameterId}`, body: varsBody({ value: "w" }) },
    "DELETE /policy-sets/:policy_set_id/parameters/:parameter_id": { path: `${params}/${parameterId}` },
    "GET /team-projects": { path: `${tp}?filter%5Bproject%5D%5Bid%5D=prj-a` },
    "GET /team-projects/:id": { path: `${tp}/${grantId}` },
    "POST /team-projects": {
      path: tp,
      body: {
        data: {
          type: "team-projects",
          attributes: { access: "write" },
          relationships: { project: { data: { type: "projects", id: "prj-a" } }, team: { data: { type: "teams", id: "team-owners" } } },
        },
      },
    },
    "PATCH /team-projects/:id": { path: `${tp}/${grantId}`, body: { data: { type: "team-projects", attributes: { access: "write" } } } },
    "DELETE /team-projects/:id": { path: `${tp}/${grantId}` },
    "GET /agent-pools/:agent_pool_id/authentication-tokens": { path: "/api/v2/agent-pools/apool-a/authentication-tokens" },
    "POST /agent-pools/:agent_pool_id/authentication-tokens": {
      path: "/api/v2/agent-pools/apool-a/authentication-tokens",
      body: { data: { type: "authentication-tokens", attributes: { description: "new" } } },
    },
    "GET /authentication-tokens/:token_id": { path: `/api/v2/authentication-tokens/${agentTokenId}` },
    "DELETE /authentication-tokens/:token_id": { path: `/api/v2/authentication-tokens/${agentTokenId}` },
    "GET /agent-pools/:agent_pool_id/agents": { path: "/api/v2/agent-pools/apool-a/agents" },
    "GET /agents/:agent_id": { path: "/api/v2/agents/agent-aaaaaaaaaaaaaaaa" },
    "DELETE /agents/:agent_id": { path: "/api/v2/agents/agent-aaaaaaaaaaaaaaaa" },
    "GET /teams/:team_id/authentication-tokens": { path: "/api/v2/teams/team-owners/authentication-tokens" },
    "GET /organization/audit-trail": { path: "/api/v2/organization/audit-trail" },
    "GET /organizations/:organization_name/tasks": { path: "/api/v2/organizations/acme/tasks" },
    "POST /organizations/:organization_name/tasks": { path: "/api/v2/organizations/acme/tasks", body: taskBody({ name: "new", url: "https://new.example/hook" }) },
    "GET /tasks/:task_id": { path: `/api/v2/tasks/${taskId}` },
    "PATCH /tasks/:task_id": { path: `/api/v2/tasks/${taskId}`, body: taskBody({ description: "renamed" }) },
    "DELETE /tasks/:task_id": { path: `/api/v2/tasks/${taskId}` },
    "GET /workspaces/:workspace_id/tasks": { path: "/api/v2/workspaces/ws-a/tasks" },
    "POST /workspaces/:workspace_id/tasks": { path: "/api/v2/workspaces/ws-b/tasks", body: workspaceTaskBody(taskId, { "enforcement-level": "advisory", stages: ["post_plan"] }) },
    "GET /workspaces/:workspace_id/tasks/:workspace_task_id": { path: `/api/v2/workspaces/ws-a/tasks/${workspaceTaskId}` },
    "PATCH /workspaces/:workspace_id/tasks/:workspace_task_id": {
      path: `/api/v2/workspaces/ws-a/tasks/${workspaceTaskId}`,
      body: { data: { type: "workspace-tasks", attributes: { "enforcement-level": "mandatory" } } },
    },
    "DELETE /workspaces/:workspace_id/tasks/:workspace_task_id": { path: `/api/v2/workspaces/ws-a/tasks/${workspaceTaskId}` },
    "GET /runs/:run_id/task-stages": { path: `/api/v2/runs/${runId}/task-stages` },
    "GET /task-stages/:task_stage_id": { path: `/api/v2/task-stages/${stageId}?include=task_results` },
    "POST /task-stages/:task_stage_id/actions/override": { path: `/api/v2/task-stages/${stageId}/actions/override`, body: { comment: "ship it" } },
    "GET /task-results/:task_result_id": { path: `/api/v2/task-results/${resultIds[0]}` },
    "GET /task-results/:task_result_id/outcomes": { path: `/api/v2/task-results/${resultIds[0]}/outcomes` },
    "GET /task-results/:task_result_id/delivery-attempts": { path: `/api/v2/task-results/${resultIds[0]}/delivery-attempts` },
    "POST /task-results/:task_result_id/actions/retry": { path: `/api/v2/task-results/${resultIds[0]}/actions/retry` },
    "GET /task-result-outcomes/:outcome_id": { path: `/api/v2/task-result-outcomes/${outcomeId}` },
    "GET /task-result-outcomes/:outcome_id/body": { path: `/api/v2/task-result-outcomes/${outcomeId}/body` },
    "PATCH /task-results/:task_result_id/callback": {
      path: `/api/v2/task-results/${resultIds[1]}/callback`,
      token: callbackToken,
      body: callbackBody("passed", { message: "clean" }, [outcomeItem("o2")]),
    },
    "GET /plans/:plan_id/json-output": { path: `/api/v2/plans/${run.planId}/json-output`, token: accessToken },
    "GET /configuration-versions/:configuration_version_id/download": { path: `/api/v2/configuration-versions/${run.configurationVersionId}/download`, token: accessToken },
    "GET /runs/:run_id": { path: `/api/v2/runs/${runId}?include=task_stages,plan,apply,workspace` },
    "GET /runs/:run_id/plan": { path: `/api/v2/runs/${runId}/plan` },
    "GET /plans/:plan_id": { path: `/api/v2/plans/${run.planId}` },
    "GET /plans/:plan_id/log": { path: `/api/v2/plans/${run.planId}/log`, token: accessToken },
    "GET /runs/:run_id/apply": { path: `/api/v2/runs/${runId}/apply` },
    "GET /applies/:apply_id": { path: `/api/v2/applies/${run.applyId}` },
    "GET /applies/:apply_id/log": { path: `/api/v2/applies/${run.applyId}/log` },
    "GET /logs/:capability": { path: new URL(logUrl).pathname, token: null },
    "GET /runs/:run_id/run-events": { path: `/api/v2/runs/${runId}/run-events` },
    "GET /runs/:run_id/policy-checks": { path: `/api/v2/runs/${runId}/policy-checks` },
    "GET /run-events/:run_event_id": { path: `/api/v2/run-events/${runEventId(runId, "created")}` },
    "GET /policy-checks/:policy_check_id": { path: `/api/v2/policy-checks/polchk-${runId}` },
    "GET /policy-checks/:policy_check_id/output": { path: `/api/v2/policy-checks/polchk-${runId}/output` },
    "GET /configuration-versions/:configuration_version_id": { path: `/api/v2/configuration-versions/${run.configurationVersionId}` },
    "GET /workspaces/:workspace_id/runs": { path: "/api/v2/workspaces/ws-a/runs" },
    "GET /organizations/:organization_name/runs": { path: "/api/v2/organizations/acme/runs" },
    "GET /workspaces/:workspace_id/all-vars": { path: "/api/v2/workspaces/ws-a/all-vars" },
    "GET /runs/:run_id/comments": { path: `/api/v2/runs/${runId}/comments` },
    "GET /comments/:comment_id": { path: `/api/v2/comments/${commentId}` },
    "POST /runs/:run_id/comments": { path: `/api/v2/runs/${runId}/comments`, body: { data: { type: "comments", attributes: { body: "again" } } } },
  };
  return {
    app,
    gate,
    runId,
    target(route) {
      const t = targets[route];
      if (!t) throw new Error(`no target for ${route}: add one when adding a route`);
      return t;
    },
  };
}

const send = (w: World, method: string, t: Target): Promise<TestResponse> =>
  w.app.call(method, t.path, { ...(t.token === undefined ? {} : { token: t.token }), ...(t.body === undefined ? {} : { body: t.body }) });

/** The answer to a storage that went away during the request. */
function expectUnavailable(res: TestResponse, what: string): void {
  expect(res.status, `${what}: ${res.text}`).toBe(503);
  expect(res.headers.get("retry-after"), what).toMatch(/^[1-9][0-9]*$/);
  expect(res.headers.get("content-type")).toContain("application/vnd.api+json");
  expect(res.json.errors).toEqual([{ status: "503", title: "service unavailable", detail: expect.stringMatching(/retry/) }]);
  // Nothing of the storage's own error reaches the client.
  expect(res.text).not.toMatch(/refused|ECONN|StorageUnavailable|stack/i);
}

const ROUTES = (await world()).app.runplane.routes.map((r) => `${r.method} ${r.path.slice("/api/v2".length)}`);

describe("a storage that cannot be reached answers 503 with Retry-After on every route, never 500 (D28)", () => {
  it("covers every route of the API", () => {
    expect([...ROUTES].sort()).toEqual(Object.keys(ROUTE_PERMISSIONS).sort());
  });

  it.each(ROUTES)("%s", async (route) => {
    const w = await world();
    const [method] = route.split(" ") as [string];
    const target = w.target(route);
    let appliedThenGone = false;
    for (let failAt = 0; ; failAt++) {
      w.gate.failFrom(failAt);
      const res = await send(w, method, target);
      const tripped = w.gate.tripped;
      w.gate.failFrom(null);
      const what = `${route} with the storage gone from call ${failAt}`;
      if (!tripped) {
        // Past the request's last storage call: its ordinary answer.
        expect(res.status, `${what}: ${res.text}`).toBeLessThan(500);
        expect(failAt > 0 || FAILS_WITHOUT_STORAGE.has(route), `${route} reads no storage`).toBe(true);
        break;
      }
      // decision D28: once the result and its outcomes are stored, the callback is applied; the
      // stage it settles is recomputed later (a retry or the deadline sweep), not answered 503.
      if (route === "PATCH /task-results/:task_result_id/callback" && res.status === 200) {
        expect((await w.app.runplane.runTasks.getResult(target.path.split("/")[4]!))?.status).toBe("passed");
        appliedThenGone = true;
        continue;
      }
      expectUnavailable(res, what);
      expect(failAt, `${route} keeps calling a storage that is away`).toBeLessThan(60);
    }
    if (route === "PATCH /task-results/:task_result_id/callback") expect(appliedThenGone).toBe(true);
  });

  it("answers the results page 503 with Retry-After, not 500", async () => {
    const w = await world();
    const page = createResultsPage(w.app.runplane, { prefix: "/app", logger: silentLogger });
    const request = () => new Request(`http://localhost/app/runs/${w.runId}`, { headers: { authorization: `Bearer ${w.app.ownerToken}` } });
    expect((await page(request())).status).toBe(200);
    w.gate.failFrom(0);
    const res = await page(request());
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).not.toMatch(/refused|ECONN|StorageUnavailable/);
  });
});
