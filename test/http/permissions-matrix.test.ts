import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  can,
  canInOrganization,
  canReadGrant,
  resolveProjectAccess,
  type Action,
  type OrganizationAction,
} from "../../src/domain/permissions.js";
import type { OrgPermission, Principal } from "../../src/schemas/common.js";
import type { TeamProjectCreateAttributes } from "../../src/schemas/team-projects.js";
import { createKeyring, generateKey, type Keyring } from "../../src/index.js";
import { deliveryPayloadBinding } from "../../src/services/task-stages.js";
import { runEventId } from "../../src/domain/run-events.js";
import { createTestApp, varsBody, type TestApp } from "../helpers/app.js";

/**
 * Decision D21 end to end: for every route, every access level of the caller's team on the project
 * and every organization permission of that team, the HTTP status is 2xx exactly when the pure
 * resolver allows the action, and 404 otherwise (decision D4, never 403). One memory app per
 * organization permission; the grant is swapped between checks.
 */

/** What the resolver is asked for a row. Written per D21, deliberately not read from ROUTE_PERMISSIONS. */
type Expectation =
  | { kind: "public" }
  | { kind: "project"; action: Action }
  /** Every one of several project actions (a route that checks a second action itself). */
  | { kind: "project-all"; actions: Action[] }
  | { kind: "organization"; action: OrganizationAction }
  | { kind: "read-grant"; whose: "own" | "other" };

interface Target {
  path: string;
  body?: unknown;
  /** Bearer token of the request; default the caller's (user-dev's) API token. */
  token?: string;
}

interface Row {
  /** The route key as in ROUTE_PERMISSIONS (`METHOD /path`). */
  route: string;
  /** Distinguishes several rows of one route. */
  variant?: string;
  ok: number;
  expect: Expectation;
  /** Why the row can never be denied (the vacuity check then expects only allowed outcomes). */
  neverDenied?: string;
  /** Creates what the request acts on, as the trusted host; null skips the check (nothing to act on). */
  prepare(w: World): Promise<Target | null>;
}

interface World extends TestApp {
  ownGrantId: string | null;
  otherGrantId: string;
  /** Opens delivery payloads, to learn a result's callback access token. */
  keyring: Keyring;
}

let serial = 0;
const unique = (prefix: string): string => `${prefix}_${++serial}`;
const tpBody = (attributes: Record<string, unknown>, relationships?: { project: string; team: string }) => ({
  data: {
    type: "team-projects",
    attributes,
    ...(relationships
      ? { relationships: { project: { data: { type: "projects", id: relationships.project } }, team: { data: { type: "teams", id: relationships.team } } } }
      : {}),
  },
});
const newVariable = async (w: World) => (await w.runplane.variables.create("ws-a", { key: unique("k"), category: "env" })).id;
const newParameter = async (w: World) => (await w.runplane.policySetParameters.create("polset-a", { key: unique("p"), category: "policy-set" })).id;
const newTeamToken = async (w: World) =>
  (await w.runplane.directory.createApiToken({ organization: "acme", kind: "team", teamId: "team-public", description: "matrix" })).id;
const newAgentToken = async (w: World) =>
  (await w.runplane.agentTokens.create("apool-a", { description: "matrix", createdBy: { type: "organizations", id: "acme" } })).id;

const newAgent = async (w: World, status: "idle" | "exited" = "idle") => {
  const id = unique("agent-matrix");
  const at = "2026-01-01T00:00:00.000Z";
  await w.storage.agents.insert({ id, agentPoolId: "apool-a", tokenId: "at-matrix", name: null, status, ipAddress: "10.0.0.1", lastPingAt: at, createdAt: at });
  return id;
};

const newTask = async (w: World) => (await w.runplane.runTasks.tasks.create("acme", { name: unique("task"), url: "https://scan.example/hook" })).id;
const newWorkspaceTask = async (w: World) =>
  (await w.runplane.runTasks.workspaceTasks.create("ws-a", await newTask(w), { "enforcement-level": "advisory", stages: ["pre_plan"] })).id;

/**
 * A run of ws-a whose post_plan stage (one mandatory task, set up once per app) is started; with
 * `fail` its result has failed with one outcome, so the stage awaits an override (D13).
 */
async function startedRun(w: World, fail: boolean) {
  const { run } = await w.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
  const stage = await w.runplane.runTasks.startStage(run.id, "post_plan");
  const [result] = await w.runplane.runTasks.listResults(stage.id);
  const [delivery] = await w.storage.taskDeliveries.listByResult(result!.id);
  const token = (JSON.parse(w.keyring.open(delivery!.payload, deliveryPayloadBinding(delivery!.id))) as { access_token: string }).access_token;
  let outcomeId = "";
  if (fail) {
    const outcome = { type: "task-result-outcomes", attributes: { "outcome-id": "o1", description: "found one", body: "# details" } };
    await w.runplane.runTasks.callback(result!.id, token, {
      data: { type: "task-results", attributes: { status: "failed", message: "m" }, relationships: { outcomes: { data: [outcome] } } },
    });
    outcomeId = (await w.runplane.runTasks.listOutcomes(result!.id, { page: { offset: 0, limit: 1 } })).items[0]!.id;
  }
  return { runId: run.id, stageId: stage.id, resultId: result!.id, token, outcomeId };
}

const VARS = "/api/v2/workspaces/ws-a/vars";
const PARAMS = "/api/v2/policy-sets/polset-a/parameters";
const TP = "/api/v2/team-projects";
const project = (action: Action): Expectation => ({ kind: "project", action });
const organization = (action: OrganizationAction): Expectation => ({ kind: "organization", action });

/** Every route and how to call it. Add a row when a route is added: a test below fails until then. */
const MATRIX: Row[] = [
  { route: "GET /ping", ok: 204, expect: { kind: "public" }, neverDenied: "public", prepare: async () => ({ path: "/api/v2/ping" }) },

  { route: "GET /workspaces/:workspace_id/vars", ok: 200, expect: project("variables:read"), prepare: async () => ({ path: VARS }) },
  { route: "GET /workspaces/:workspace_id/all-vars", ok: 200, expect: project("variables:read"), prepare: async () => ({ path: "/api/v2/workspaces/ws-a/all-vars" }) },
  { route: "GET /workspaces/:workspace_id/vars/:variable_id", ok: 200, expect: project("variables:read"), prepare: async (w) => ({ path: `${VARS}/${await newVariable(w)}` }) },
  { route: "POST /workspaces/:workspace_id/vars", ok: 201, expect: project("variables:write"), prepare: async () => ({ path: VARS, body: varsBody({ key: unique("k"), category: "env" }) }) },
  { route: "PATCH /workspaces/:workspace_id/vars/:variable_id", ok: 200, expect: project("variables:write"), prepare: async (w) => ({ path: `${VARS}/${await newVariable(w)}`, body: varsBody({ value: "x" }) }) },
  { route: "DELETE /workspaces/:workspace_id/vars/:variable_id", ok: 204, expect: project("variables:write"), prepare: async (w) => ({ path: `${VARS}/${await newVariable(w)}` }) },

  { route: "GET /policy-sets/:policy_set_id/parameters", ok: 200, expect: organization("policy-set-parameters:read"), prepare: async () => ({ path: PARAMS }) },
  { route: "GET /policy-sets/:policy_set_id/parameters/:parameter_id", ok: 200, expect: organization("policy-set-parameters:read"), prepare: async (w) => ({ path: `${PARAMS}/${await newParameter(w)}` }) },
  { route: "POST /policy-sets/:policy_set_id/parameters", ok: 201, expect: organization("policy-set-parameters:write"), prepare: async () => ({ path: PARAMS, body: varsBody({ key: unique("p"), category: "policy-set" }) }) },
  { route: "PATCH /policy-sets/:policy_set_id/parameters/:parameter_id", ok: 200, expect: organization("policy-set-parameters:write"), prepare: async (w) => ({ path: `${PARAMS}/${await newParameter(w)}`, body: varsBody({ value: "x" }) }) },
  { route: "DELETE /policy-sets/:policy_set_id/parameters/:parameter_id", ok: 204, expect: organization("policy-set-parameters:write"), prepare: async (w) => ({ path: `${PARAMS}/${await newParameter(w)}` }) },

  { route: "GET /team-projects", ok: 200, expect: project("project:read"), prepare: async () => ({ path: `${TP}?filter%5Bproject%5D%5Bid%5D=prj-a` }) },
  { route: "GET /team-projects/:id", variant: "own team", ok: 200, expect: { kind: "read-grant", whose: "own" }, neverDenied: "a member always sees its own team's grant", prepare: async (w) => (w.ownGrantId ? { path: `${TP}/${w.ownGrantId}` } : null) },
  { route: "GET /team-projects/:id", variant: "another secret team", ok: 200, expect: { kind: "read-grant", whose: "other" }, prepare: async (w) => ({ path: `${TP}/${w.otherGrantId}` }) },
  { route: "POST /team-projects", ok: 201, expect: project("team-access:manage"), prepare: async () => ({ path: TP, body: tpBody({ access: "read" }, { project: "prj-a", team: "team-public" }) }) },
  { route: "PATCH /team-projects/:id", variant: "own team", ok: 200, expect: project("team-access:manage"), prepare: async (w) => (w.ownGrantId ? { path: `${TP}/${w.ownGrantId}`, body: tpBody({}) } : null) },
  { route: "PATCH /team-projects/:id", variant: "another secret team", ok: 200, expect: project("team-access:manage"), prepare: async (w) => ({ path: `${TP}/${w.otherGrantId}`, body: tpBody({ access: "write" }) }) },
  { route: "DELETE /team-projects/:id", variant: "own team", ok: 204, expect: project("team-access:manage"), prepare: async (w) => (w.ownGrantId ? { path: `${TP}/${w.ownGrantId}` } : null) },
  { route: "DELETE /team-projects/:id", variant: "another secret team", ok: 204, expect: project("team-access:manage"), prepare: async (w) => ({ path: `${TP}/${w.otherGrantId}` }) },

  { route: "GET /agent-pools/:agent_pool_id/authentication-tokens", ok: 200, expect: organization("agent-tokens:manage"), prepare: async () => ({ path: "/api/v2/agent-pools/apool-a/authentication-tokens" }) },
  { route: "POST /agent-pools/:agent_pool_id/authentication-tokens", ok: 201, expect: organization("agent-tokens:manage"), prepare: async () => ({ path: "/api/v2/agent-pools/apool-a/authentication-tokens", body: { data: { type: "authentication-tokens", attributes: { description: "m" } } } }) },
  { route: "GET /authentication-tokens/:token_id", ok: 200, expect: organization("agent-tokens:manage"), prepare: async (w) => ({ path: `/api/v2/authentication-tokens/${await newAgentToken(w)}` }) },
  { route: "DELETE /authentication-tokens/:token_id", ok: 204, expect: organization("agent-tokens:manage"), prepare: async (w) => ({ path: `/api/v2/authentication-tokens/${await newAgentToken(w)}` }) },
  // decision D34: a pool's agents, read by who may read the pool.
  { route: "GET /agent-pools/:agent_pool_id/agents", ok: 200, expect: organization("agent-pools:read"), prepare: async () => ({ path: "/api/v2/agent-pools/apool-a/agents" }) },
  { route: "GET /agents/:agent_id", ok: 200, expect: organization("agent-pools:read"), prepare: async (w) => ({ path: `/api/v2/agents/${await newAgent(w)}` }) },
  // decision D46: removing a (silent) agent is managing the pool's agents.
  { route: "DELETE /agents/:agent_id", ok: 204, expect: organization("agent-tokens:manage"), prepare: async (w) => ({ path: `/api/v2/agents/${await newAgent(w, "exited")}` }) },
  // Team API tokens under the same paths, owners only.
  { route: "GET /teams/:team_id/authentication-tokens", ok: 200, expect: organization("api-tokens:manage"), prepare: async () => ({ path: "/api/v2/teams/team-public/authentication-tokens" }) },
  // decision D53: the audit trail of the caller's organization, owners only.
  { route: "GET /organization/audit-trail", ok: 200, expect: organization("audit-trail:read"), prepare: async () => ({ path: "/api/v2/organization/audit-trail" }) },
  { route: "GET /authentication-tokens/:token_id", variant: "team API token", ok: 200, expect: organization("api-tokens:manage"), prepare: async (w) => ({ path: `/api/v2/authentication-tokens/${await newTeamToken(w)}` }) },
  { route: "DELETE /authentication-tokens/:token_id", variant: "team API token", ok: 204, expect: organization("api-tokens:manage"), prepare: async (w) => ({ path: `/api/v2/authentication-tokens/${await newTeamToken(w)}` }) },

  { route: "GET /organizations/:organization_name/tasks", ok: 200, expect: organization("run-tasks:configure"), prepare: async () => ({ path: "/api/v2/organizations/acme/tasks" }) },
  { route: "POST /organizations/:organization_name/tasks", ok: 201, expect: organization("run-tasks:configure"), prepare: async () => ({ path: "/api/v2/organizations/acme/tasks", body: { data: { type: "tasks", attributes: { name: unique("task"), url: "https://scan.example/hook" } } } }) },
  { route: "GET /tasks/:task_id", ok: 200, expect: organization("run-tasks:configure"), prepare: async (w) => ({ path: `/api/v2/tasks/${await newTask(w)}` }) },
  { route: "PATCH /tasks/:task_id", ok: 200, expect: organization("run-tasks:configure"), prepare: async (w) => ({ path: `/api/v2/tasks/${await newTask(w)}`, body: { data: { type: "tasks", attributes: { description: "x" } } } }) },
  { route: "DELETE /tasks/:task_id", ok: 204, expect: organization("run-tasks:configure"), prepare: async (w) => ({ path: `/api/v2/tasks/${await newTask(w)}` }) },

  { route: "GET /workspaces/:workspace_id/tasks", ok: 200, expect: project("run-tasks:manage"), prepare: async () => ({ path: "/api/v2/workspaces/ws-a/tasks" }) },
  { route: "POST /workspaces/:workspace_id/tasks", ok: 201, expect: project("run-tasks:manage"), prepare: async (w) => ({ path: "/api/v2/workspaces/ws-a/tasks", body: { data: { type: "workspace-tasks", attributes: { "enforcement-level": "advisory", stages: ["pre_plan"] }, relationships: { task: { data: { type: "tasks", id: await newTask(w) } } } } } }) },
  { route: "GET /workspaces/:workspace_id/tasks/:workspace_task_id", ok: 200, expect: project("run-tasks:manage"), prepare: async (w) => ({ path: `/api/v2/workspaces/ws-a/tasks/${await newWorkspaceTask(w)}` }) },
  { route: "PATCH /workspaces/:workspace_id/tasks/:workspace_task_id", ok: 200, expect: project("run-tasks:manage"), prepare: async (w) => ({ path: `/api/v2/workspaces/ws-a/tasks/${await newWorkspaceTask(w)}`, body: { data: { type: "workspace-tasks", attributes: { "enforcement-level": "mandatory" } } } }) },
  { route: "DELETE /workspaces/:workspace_id/tasks/:workspace_task_id", ok: 204, expect: project("run-tasks:manage"), prepare: async (w) => ({ path: `/api/v2/workspaces/ws-a/tasks/${await newWorkspaceTask(w)}` }) },

  { route: "GET /runs/:run_id/task-stages", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/runs/${(await startedRun(w, false)).runId}/task-stages` }) },
  { route: "GET /task-stages/:task_stage_id", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/task-stages/${(await startedRun(w, false)).stageId}` }) },
  { route: "POST /task-stages/:task_stage_id/actions/override", ok: 200, expect: project("runs:override"), prepare: async (w) => ({ path: `/api/v2/task-stages/${(await startedRun(w, true)).stageId}/actions/override`, body: { data: { attributes: { comment: "ship it" } } } }) },
  { route: "GET /task-results/:task_result_id", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/task-results/${(await startedRun(w, false)).resultId}` }) },
  { route: "GET /task-results/:task_result_id/outcomes", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/task-results/${(await startedRun(w, true)).resultId}/outcomes` }) },
  // decision D31: attempts read like their result; a retry needs run-tasks and runs >= read.
  { route: "GET /task-results/:task_result_id/delivery-attempts", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/task-results/${(await startedRun(w, false)).resultId}/delivery-attempts` }) },
  { route: "POST /task-results/:task_result_id/actions/retry", ok: 202, expect: { kind: "project-all", actions: ["runs:read", "run-tasks:manage"] }, prepare: async (w) => ({ path: `/api/v2/task-results/${await retryingResult(w)}/actions/retry` }) },
  { route: "GET /task-result-outcomes/:outcome_id", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/task-result-outcomes/${(await startedRun(w, true)).outcomeId}` }) },
  { route: "GET /task-result-outcomes/:outcome_id/body", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/task-result-outcomes/${(await startedRun(w, true)).outcomeId}/body` }) },
  // decision D17: the callback answers to the result's access token, whoever the API caller is.
  {
    route: "PATCH /task-results/:task_result_id/callback", ok: 200, expect: { kind: "public" }, neverDenied: "authenticated by the result's access token, not by permissions",
    prepare: async (w) => {
      const { resultId, token } = await startedRun(w, false);
      return { path: `/api/v2/task-results/${resultId}/callback`, token, body: { data: { type: "task-results", attributes: { status: "running" } } } };
    },
  },
  // decision D24: artifacts answer to an API credential with runs >= read, or to the result's access token.
  { route: "GET /plans/:plan_id/json-output", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/plans/${await planOf(w)}/json-output` }) },
  { route: "GET /configuration-versions/:configuration_version_id/download", ok: 200, expect: project("runs:read"), prepare: async (w) => (await startedRun(w, false), { path: "/api/v2/configuration-versions/cv-1/download" }) },
  {
    route: "GET /plans/:plan_id/json-output", variant: "access token", ok: 200, expect: { kind: "public" }, neverDenied: "the result's access token, not permissions",
    prepare: async (w) => {
      const { runId, token } = await startedRun(w, false);
      return { path: `/api/v2/plans/${(await w.runplane.runTasks.getRun(runId))!.planId}/json-output`, token };
    },
  },

  // The read side of a run (D24), runs >= read; the plan and its log take the access token too.
  { route: "GET /runs/:run_id", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/runs/${(await startedRun(w, false)).runId}/` }) },
  // decision D49: the workspace's list is runs:read on it; the organization's answers every member
  // and lists only the runs of workspaces they may read (test/contract/run-lists.test.ts).
  { route: "GET /workspaces/:workspace_id/runs", ok: 200, expect: project("runs:read"), prepare: async () => ({ path: "/api/v2/workspaces/ws-a/runs" }) },
  {
    route: "GET /organizations/:organization_name/runs", ok: 200, expect: { kind: "public" }, neverDenied: "every member reads the list; it holds only the runs they may read",
    prepare: async () => ({ path: "/api/v2/organizations/acme/runs" }),
  },
  { route: "GET /runs/:run_id/plan", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/runs/${(await startedRun(w, false)).runId}/plan` }) },
  { route: "GET /plans/:plan_id", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/plans/${await planOf(w)}` }) },
  { route: "GET /plans/:plan_id/log", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/plans/${await planOf(w)}/log` }) },
  { route: "GET /runs/:run_id/apply", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/runs/${(await startedRun(w, false)).runId}/apply` }) },
  { route: "GET /applies/:apply_id", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/applies/${await applyOf(w)}` }) },
  { route: "GET /applies/:apply_id/log", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/applies/${await applyOf(w)}/log` }) },
  { route: "GET /runs/:run_id/run-events", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/runs/${(await startedRun(w, false)).runId}/run-events` }) },
  { route: "GET /runs/:run_id/policy-checks", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/runs/${(await startedRun(w, false)).runId}/policy-checks` }) },
  // D36: an event id names its run; a policy check's run is named by the host (runs.policyCheckRun).
  { route: "GET /run-events/:run_event_id", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/run-events/${runEventId((await startedRun(w, false)).runId, "created")}` }) },
  { route: "GET /policy-checks/:policy_check_id/output", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/policy-checks/polchk-${(await startedRun(w, false)).runId}/output` }) },
  { route: "GET /configuration-versions/:configuration_version_id", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/configuration-versions/${(await w.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: unique("cv") })).run.configurationVersionId}` }) },
  { route: "GET /policy-checks/:policy_check_id", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/policy-checks/polchk-${(await startedRun(w, false)).runId}` }) },
  { route: "GET /runs/:run_id/comments", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/runs/${(await startedRun(w, false)).runId}/comments` }) },
  { route: "POST /runs/:run_id/comments", ok: 201, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/runs/${(await startedRun(w, false)).runId}/comments`, body: { data: { type: "comments", attributes: { body: "seen" } } } }) },
  { route: "GET /comments/:comment_id", ok: 200, expect: project("runs:read"), prepare: async (w) => ({ path: `/api/v2/comments/${await commentOf(w)}` }) },
  {
    // decision D32: where log-read-url points; the capability in its path is the credential.
    route: "GET /logs/:capability", ok: 200, expect: { kind: "public" }, neverDenied: "the capability in the path, not permissions",
    prepare: async (w) => ({ path: new URL((await w.call("GET", `/api/v2/plans/${await planOf(w)}`)).json.data.attributes["log-read-url"]).pathname }),
  },
  {
    route: "GET /plans/:plan_id/log", variant: "access token", ok: 200, expect: { kind: "public" }, neverDenied: "the result's access token, not permissions",
    prepare: async (w) => {
      const { runId, token } = await startedRun(w, false);
      return { path: `/api/v2/plans/${(await w.runplane.runTasks.getRun(runId))!.planId}/log`, token };
    },
  },
];

/** A started run's result whose first attempt failed: its delivery waits a minute for its retry. */
async function retryingResult(w: World): Promise<string> {
  const { resultId } = await startedRun(w, false);
  const deliveries = w.runplane.runTasks.deliveries;
  for (const claimed of await deliveries.claim({ owner: "matrix", leaseMs: 30_000, limit: 10_000 })) {
    const prepared = claimed.row.taskResultId === resultId ? await deliveries.prepare(claimed) : null;
    if (prepared) await deliveries.fail(prepared, { error: "responded with 503", delayMs: 60_000 });
    else await deliveries.release(claimed.row);
  }
  return resultId;
}

async function planOf(w: World): Promise<string> {
  const { runId } = await startedRun(w, false);
  return (await w.runplane.runTasks.getRun(runId))!.planId;
}

async function applyOf(w: World): Promise<string> {
  const { runId } = await startedRun(w, false);
  return (await w.runplane.runTasks.getRun(runId))!.applyId;
}

async function commentOf(w: World): Promise<string> {
  const { runId } = await startedRun(w, false);
  const run = (await w.runplane.runTasks.getRun(runId))!;
  const id = `wsc-${String(++serial).padStart(16, "0")}`;
  await w.storage.comments.insert({ id, runId, workspaceId: run.workspaceId, organization: run.organization, body: "seen", authorId: null, createdAt: run.createdAt }, 1000);
  return id;
}

/** The caller's team's grant on prj-a: none, each fixed level, and custom combinations. */
const LEVELS: { name: string; grant: TeamProjectCreateAttributes | null }[] = [
  { name: "no grant", grant: null },
  { name: "read", grant: { access: "read" } },
  { name: "write", grant: { access: "write" } },
  { name: "maintain", grant: { access: "maintain" } },
  { name: "admin", grant: { access: "admin" } },
  { name: "custom defaults", grant: { access: "custom" } },
  { name: "custom variables read", grant: { access: "custom", "workspace-access": { variables: "read" } } },
  { name: "custom variables write, teams read", grant: { access: "custom", "workspace-access": { variables: "write" }, "project-access": { teams: "read" } } },
  { name: "custom teams manage", grant: { access: "custom", "project-access": { teams: "manage" } } },
  { name: "custom runs apply, overrides, run tasks", grant: { access: "custom", "workspace-access": { runs: "apply", "policy-overrides": true, "run-tasks": true } } },
];

/** The caller's team's organization permissions; `owner`: the caller also belongs to the owners team. */
const ORG_SETTINGS: { name: string; permissions: OrgPermission[]; owner?: boolean }[] = [
  { name: "none", permissions: [] },
  { name: "manage-projects", permissions: ["manage-projects"] },
  { name: "manage-workspaces", permissions: ["manage-workspaces"] },
  { name: "manage-policies", permissions: ["manage-policies"] },
  { name: "manage-agent-pools", permissions: ["manage-agent-pools"] },
  { name: "manage-run-tasks", permissions: ["manage-run-tasks"] },
  { name: "manage-policy-overrides", permissions: ["manage-policy-overrides"] },
  // Owners-only routes are allowed somewhere too, so their rows are not vacuous.
  { name: "owners team member", permissions: [], owner: true },
];

const label = (row: Row): string => `${row.route}${row.variant ? ` (${row.variant})` : ""}`;
const outcomes = new Map<string, Set<"allowed" | "denied">>();

describe("the route table of the matrix", () => {
  it("has a row for every route the handler serves", async () => {
    const { runplane } = await createTestApp();
    const covered = new Set(MATRIX.map((r) => r.route));
    const missing = runplane.routes.map((r) => `${r.method} ${r.path.slice("/api/v2".length)}`).filter((key) => !covered.has(key));
    expect(missing, "add a row to MATRIX in test/http/permissions-matrix.test.ts").toStrictEqual([]);
  });
});

describe.each(ORG_SETTINGS)("permission matrix, team organization permissions: $name", (setting) => {
  let w: World;
  beforeAll(async () => {
    const keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
    const app = await createTestApp({
      keyring,
      overridableTasks: true,
      runs: { policyChecks: (run) => [{ id: `polchk-${run.id}`, status: "passed" }], policyCheckRun: (id) => id.replace(/^polchk-/, "") },
      artifacts: { planJson: () => ({}), configurationVersion: () => "tgz", planLog: () => "planned", applyLog: () => "applied" },
    });
    const d = app.runplane.directory;
    await d.teams.update("team-devs", { orgPermissions: setting.permissions });
    if (setting.owner) await d.teams.update("team-owners", { members: ["user-owner", "user-dev"] });
    await d.users.create({ id: "user-ops", username: "ops" });
    await d.teams.create({ id: "team-ops", name: "ops", organization: "acme", visibility: "secret", members: ["user-ops"] });
    await d.teams.create({ id: "team-public", name: "public", organization: "acme", visibility: "organization" });
    await d.agentPools.create({ id: "apool-a", name: "pool", organization: "acme" });
    const scan = await app.runplane.runTasks.tasks.create("acme", { name: "scan", url: "https://scan.example/hook" });
    await app.runplane.runTasks.workspaceTasks.create("ws-a", scan.id, { "enforcement-level": "mandatory", stages: ["post_plan"] });
    w = { ...app, ownGrantId: null, otherGrantId: "", keyring };
  });

  /** Resets prj-a's grants: the caller's team at `level`, team-ops at read. */
  const arrange = async (level: TeamProjectCreateAttributes | null): Promise<void> => {
    await w.storage.teamProjects.deleteByProject("prj-a");
    w.ownGrantId = level ? (await w.runplane.teamProjects.create("prj-a", "team-devs", level)).id : null;
    w.otherGrantId = (await w.runplane.teamProjects.create("prj-a", "team-ops", { access: "read" })).id;
  };

  /** What the resolver says, from the same directory and grants the server sees. */
  const expected = async (row: Row): Promise<boolean> => {
    const team = (await w.storage.teams.get("team-devs"))!;
    const teams = setting.owner ? [team, (await w.storage.teams.get("team-owners"))!] : [team];
    const principal: Principal = {
      organization: "acme",
      kind: "user",
      userId: "user-dev",
      teamIds: teams.map((t) => t.id),
      isOwner: setting.owner === true,
      orgPermissions: team.orgPermissions,
    };
    const e = row.expect;
    if (e.kind === "public") return true;
    if (e.kind === "organization") return canInOrganization({ principal, teams, organization: "acme" }, e.action).allowed;
    const prj = (await w.storage.projects.get("prj-a"))!;
    const grants = (await w.storage.teamProjects.listByProject("prj-a", {}, { offset: 0, limit: 100 })).items;
    const effective = resolveProjectAccess({ principal, teams, grants, project: prj });
    if (e.kind === "project") return can(effective, e.action).allowed;
    if (e.kind === "project-all") return e.actions.every((action) => can(effective, action).allowed);
    const grant = grants.find((g) => g.id === (e.whose === "own" ? w.ownGrantId : w.otherGrantId))!;
    return can(effective, "project:read").allowed && canReadGrant(effective, principal, grant).allowed;
  };

  it.each(LEVELS)("answers every route as the resolver decides, grant: $name", async (level) => {
    for (const row of MATRIX) {
      await arrange(level.grant);
      const target = await row.prepare(w);
      if (!target) continue;
      const allowed = await expected(row);
      const method = row.route.split(" ")[0]!;
      const res = await w.call(method, target.path, { token: target.token ?? w.devToken, ...(target.body !== undefined ? { body: target.body } : {}) });
      const where = `${label(row)} | grant ${level.name} | org ${setting.name} | ${res.text}`;
      expect(res.status, where).toBe(allowed ? row.ok : 404);
      const seen = outcomes.get(label(row)) ?? new Set();
      outcomes.set(label(row), seen.add(allowed ? "allowed" : "denied"));
    }
  });
});

describe("the matrix itself", () => {
  afterAll(() => outcomes.clear());
  it("saw every protected route both allowed and denied, so no row is vacuous", () => {
    for (const row of MATRIX) {
      const seen = outcomes.get(label(row));
      expect(seen, label(row)).toBeDefined();
      const both = row.neverDenied ? ["allowed"] : ["allowed", "denied"];
      expect([...seen!].sort(), label(row)).toStrictEqual(both);
    }
  });
});
