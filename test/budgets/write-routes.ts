import { createKeyring, generateKey } from "../../src/index.js";
import type { Storage } from "../../src/storage/types.js";
import { createTestApp, varsBody } from "../helpers/app.js";
import { attachTask, callbackBody, createTask, fakeClock, outcomeItem, sendCallback, taskBody, tokenOf, workspaceTaskBody, type RunTaskApp } from "../helpers/run-tasks.js";

/** One request of a write route: what it sends, and who sends it (default the owner's token). */
export interface Request {
  path: string;
  body?: unknown;
  token?: string;
}

/** A write route and how to make a fresh request of it (its set-up is not counted). */
export type WriteRoutes = Record<string, () => Promise<Request>>;

/**
 * A test app over `storage` and a fresh, applicable request for every API write route: a route
 * measured twice gets two requests that both succeed (a variable to delete each time, say).
 */
export async function writeRouteWorld(storage: Storage): Promise<{ app: RunTaskApp; routes: WriteRoutes }> {
  const keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
  const clock = fakeClock();
  const base = await createTestApp({ storage, keyring, clock, publicUrl: "https://runplane.example", overridableTasks: true });
  const app: RunTaskApp = Object.assign(base, { keyring, clock });
  const r = app.runplane;
  await attachTask(app, await createTask(app, "gate"), "mandatory");
  await r.directory.agentPools.create({ id: "apool-a", name: "pool", organization: "acme" });
  const agentTokenId = (await r.agentTokens.create("apool-a", { description: "d", createdBy: { type: "organizations", id: "acme" } })).id;
  let n = 0;
  const next = () => ++n;
  const started = async () => {
    const { run, stages } = await r.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    await r.runTasks.startStage(run.id, stages[0]!.stage);
    const [result] = await r.runTasks.listResults(stages[0]!.id);
    return { runId: run.id, stageId: stages[0]!.id, resultId: result!.id, token: await tokenOf(app, result!.id) };
  };
  const failed = async () => {
    const s = await started();
    const res = await sendCallback(app, s.resultId, s.token, callbackBody("failed", { message: "no" }));
    if (res.status !== 200) throw new Error(`callback failed: ${res.status} ${res.text}`);
    return s;
  };
  // A result whose first attempt failed: its delivery waits a minute for its retry.
  const retrying = async () => {
    const { resultId } = await started();
    const deliveries = r.runTasks.deliveries;
    for (const claimed of await deliveries.claim({ owner: "budget", leaseMs: 30_000, limit: 10_000 })) {
      const prepared = claimed.row.taskResultId === resultId ? await deliveries.prepare(claimed) : null;
      if (prepared) await deliveries.fail(prepared, { error: "responded with 503", delayMs: 60_000 });
      else await deliveries.release(claimed.row);
    }
    return resultId;
  };
  const team = async () => (await r.directory.teams.create({ id: `team-b${next()}`, name: `budget${n}`, organization: "acme" })).id;
  const grant = async () => (await r.teamProjects.create("prj-a", await team(), { access: "read" })).id;
  const variable = async () => (await r.variables.create("ws-a", { key: `k${next()}`, value: "v", category: "env" })).id;
  const parameter = async () => (await r.policySetParameters.create("polset-a", { key: `p${next()}`, category: "policy-set" })).id;
  const task = () => createTask(app, `t${next()}`);
  const attached = async () => attachTask(app, await task(), "advisory", ["post_plan"], "ws-b");
  const vars = "/api/v2/workspaces/ws-a/vars";
  const params = "/api/v2/policy-sets/polset-a/parameters";
  const tp = "/api/v2/team-projects";
  const routes: WriteRoutes = {
    "POST /workspaces/:workspace_id/vars": async () => ({ path: vars, body: varsBody({ key: `new${next()}`, value: "v", category: "env" }) }),
    "POST /workspaces/:workspace_id/vars (sensitive)": async () => ({ path: vars, body: varsBody({ key: `s${next()}`, value: "v", category: "env", sensitive: true }) }),
    "PATCH /workspaces/:workspace_id/vars/:variable_id": async () => ({ path: `${vars}/${await variable()}`, body: varsBody({ value: "w" }) }),
    "DELETE /workspaces/:workspace_id/vars/:variable_id": async () => ({ path: `${vars}/${await variable()}` }),
    "POST /policy-sets/:policy_set_id/parameters": async () => ({ path: params, body: varsBody({ key: `new${next()}`, value: "v", category: "policy-set" }) }),
    "PATCH /policy-sets/:policy_set_id/parameters/:parameter_id": async () => ({ path: `${params}/${await parameter()}`, body: varsBody({ value: "w" }) }),
    "DELETE /policy-sets/:policy_set_id/parameters/:parameter_id": async () => ({ path: `${params}/${await parameter()}` }),
    "POST /team-projects": async () => ({
      path: tp,
      body: { data: { type: "team-projects", attributes: { access: "write" }, relationships: { project: { data: { type: "projects", id: "prj-a" } }, team: { data: { type: "teams", id: await team() } } } } },
    }),
    "PATCH /team-projects/:id": async () => ({ path: `${tp}/${await grant()}`, body: { data: { type: "team-projects", attributes: { access: "write" } } } }),
    "DELETE /team-projects/:id": async () => ({ path: `${tp}/${await grant()}` }),
    "POST /agent-pools/:agent_pool_id/authentication-tokens": async () => ({
      path: "/api/v2/agent-pools/apool-a/authentication-tokens",
      body: { data: { type: "authentication-tokens", attributes: { description: "new" } } },
    }),
    "DELETE /authentication-tokens/:token_id": async () => {
      const id = (await r.agentTokens.create("apool-a", { description: "d", createdBy: { type: "organizations", id: "acme" } })).id;
      return { path: `/api/v2/authentication-tokens/${id}` };
    },
    "DELETE /agents/:agent_id": async () => {
      const id = `agent-budget${String(next()).padStart(10, "A")}`;
      const at = "2026-01-01T00:00:00.000Z";
      await storage.agents.insert({ id, agentPoolId: "apool-a", tokenId: agentTokenId, name: id, status: "exited", ipAddress: "unknown", lastPingAt: at, createdAt: at });
      return { path: `/api/v2/agents/${id}` };
    },
    "POST /organizations/:organization_name/tasks": async () => ({ path: "/api/v2/organizations/acme/tasks", body: taskBody({ name: `new${next()}`, url: "https://new.example/hook" }) }),
    "PATCH /tasks/:task_id": async () => ({ path: `/api/v2/tasks/${await task()}`, body: taskBody({ description: "renamed" }) }),
    "DELETE /tasks/:task_id": async () => ({ path: `/api/v2/tasks/${await task()}` }),
    "POST /workspaces/:workspace_id/tasks": async () => ({
      path: "/api/v2/workspaces/ws-b/tasks",
      body: workspaceTaskBody(await task(), { "enforcement-level": "advisory", stages: ["post_plan"] }),
    }),
    "PATCH /workspaces/:workspace_id/tasks/:workspace_task_id": async () => ({
      path: `/api/v2/workspaces/ws-b/tasks/${await attached()}`,
      body: { data: { type: "workspace-tasks", attributes: { "enforcement-level": "mandatory" } } },
    }),
    "DELETE /workspaces/:workspace_id/tasks/:workspace_task_id": async () => ({ path: `/api/v2/workspaces/ws-b/tasks/${await attached()}` }),
    "POST /task-stages/:task_stage_id/actions/override": async () => ({ path: `/api/v2/task-stages/${(await failed()).stageId}/actions/override`, body: { comment: "ship it" } }),
    "POST /task-results/:task_result_id/actions/retry": async () => ({ path: `/api/v2/task-results/${await retrying()}/actions/retry` }),
    "PATCH /task-results/:task_result_id/callback": async () => {
      const s = await started();
      return { path: `/api/v2/task-results/${s.resultId}/callback`, token: s.token, body: callbackBody("passed", { message: "clean" }, [outcomeItem("o1")]) };
    },
    "POST /runs/:run_id/comments": async () => ({ path: `/api/v2/runs/${(await started()).runId}/comments`, body: { data: { type: "comments", attributes: { body: "seen" } } } }),
  };
  return { app, routes };
}
