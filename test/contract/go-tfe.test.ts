import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { callbackBody, outcomeItem, taskBody, workspaceTaskBody } from "../helpers/run-tasks.js";
import { listDocument, oneDocument, problems } from "./go-tfe-shapes.js";
import { startContractServer, type ContractServer, type Sent } from "./harness.js";
import { allRouteKeys, routeKeyOf } from "./routes.js";

/**
 * A client check. The reference app, over a real loopback listener, is called the
 * way go-tfe calls the run read side and the six areas, and every response is decoded with go-tfe's
 * field names and types (./go-tfe-shapes.ts from test/fixtures/go-tfe/structs.json). A route of
 * these areas that the walk does not call fails the suite, so a new route joins the contract.
 */

/** What each route answers with, as go-tfe decodes it; `null` for 204 and for bodies go-tfe reads as bytes. */
const SHAPES: Record<string, z.ZodType | "empty" | "text" | "json"> = {
  "GET /runs/:run_id": oneDocument("Run"),
  "GET /runs/:run_id/plan": oneDocument("Plan"),
  "GET /plans/:plan_id": oneDocument("Plan"),
  "GET /runs/:run_id/apply": oneDocument("Apply"),
  "GET /applies/:apply_id": oneDocument("Apply"),
  "GET /plans/:plan_id/json-output": "json",
  "GET /runs/:run_id/run-events": listDocument("RunEvent", "never"),
  "GET /runs/:run_id/comments": listDocument("Comment"),
  "POST /runs/:run_id/comments": oneDocument("Comment"),
  "GET /comments/:comment_id": oneDocument("Comment"),
  "GET /runs/:run_id/policy-checks": listDocument("PolicyCheck"),

  "GET /organizations/:organization_name/tasks": listDocument("RunTask"),
  "POST /organizations/:organization_name/tasks": oneDocument("RunTask"),
  "GET /tasks/:task_id": oneDocument("RunTask"),
  "PATCH /tasks/:task_id": oneDocument("RunTask"),
  "DELETE /tasks/:task_id": "empty",
  "GET /workspaces/:workspace_id/tasks": listDocument("WorkspaceRunTask"),
  "POST /workspaces/:workspace_id/tasks": oneDocument("WorkspaceRunTask"),
  "GET /workspaces/:workspace_id/tasks/:workspace_task_id": oneDocument("WorkspaceRunTask"),
  "PATCH /workspaces/:workspace_id/tasks/:workspace_task_id": oneDocument("WorkspaceRunTask"),
  "DELETE /workspaces/:workspace_id/tasks/:workspace_task_id": "empty",

  "GET /runs/:run_id/task-stages": listDocument("TaskStage"),
  "GET /task-stages/:task_stage_id": oneDocument("TaskStage"),
  "POST /task-stages/:task_stage_id/actions/override": oneDocument("TaskStage"),
  "GET /task-results/:task_result_id": oneDocument("TaskResult"),
  "PATCH /task-results/:task_result_id/callback": "empty",
  "GET /task-results/:task_result_id/outcomes": listDocument("TaskResultOutcome"),
  "GET /task-result-outcomes/:outcome_id": oneDocument("TaskResultOutcome"),
  "GET /task-result-outcomes/:outcome_id/body": "text",

  // Unpaged (D7): go-tfe's Variables.List then has a nil Pagination.
  "GET /workspaces/:workspace_id/vars": listDocument("Variable", "never"),
  "POST /workspaces/:workspace_id/vars": oneDocument("Variable"),
  "GET /workspaces/:workspace_id/vars/:variable_id": oneDocument("Variable"),
  "PATCH /workspaces/:workspace_id/vars/:variable_id": oneDocument("Variable"),
  "DELETE /workspaces/:workspace_id/vars/:variable_id": "empty",

  "GET /policy-sets/:policy_set_id/parameters": listDocument("PolicySetParameter", "optional"),
  "POST /policy-sets/:policy_set_id/parameters": oneDocument("PolicySetParameter"),
  "GET /policy-sets/:policy_set_id/parameters/:parameter_id": oneDocument("PolicySetParameter"),
  "PATCH /policy-sets/:policy_set_id/parameters/:parameter_id": oneDocument("PolicySetParameter"),
  "DELETE /policy-sets/:policy_set_id/parameters/:parameter_id": "empty",

  "GET /team-projects": listDocument("TeamProjectAccess"),
  "POST /team-projects": oneDocument("TeamProjectAccess"),
  "GET /team-projects/:id": oneDocument("TeamProjectAccess"),
  "PATCH /team-projects/:id": oneDocument("TeamProjectAccess"),
  "DELETE /team-projects/:id": "empty",

  "GET /agent-pools/:agent_pool_id/authentication-tokens": listDocument("AgentToken"),
  "POST /agent-pools/:agent_pool_id/authentication-tokens": oneDocument("AgentToken"),
  "GET /authentication-tokens/:token_id": oneDocument("AgentToken"),
  "DELETE /authentication-tokens/:token_id": "empty",
};

/** Routes outside this walk, and why. */
const ELSEWHERE: Record<string, string> = {
  "GET /ping": "no document; its headers: test/http/rate-limit.test.ts",
  "GET /workspaces/:workspace_id/runs": "Runs.List: test/contract/run-lists.test.ts",
  "GET /organizations/:organization_name/runs": "Runs.ListForOrganization: test/contract/run-lists.test.ts",
  "GET /configuration-versions/:configuration_version_id": "ConfigurationVersions.Read: test/contract/run-reads.test.ts",
  "GET /policy-checks/:policy_check_id/output": "PolicyChecks.Logs: test/contract/run-reads.test.ts",
  "GET /workspaces/:workspace_id/all-vars": "Variables.ListAll: test/contract/run-reads.test.ts",
  "GET /plans/:plan_id/log": "log reads: test/contract/logs.test.ts",
  "GET /applies/:apply_id/log": "log reads: test/contract/logs.test.ts",
  "GET /logs/:capability": "log reads: test/contract/logs.test.ts",
  "GET /run-events/:run_event_id": "read by id: test/contract/read-by-id.test.ts",
  "GET /policy-checks/:policy_check_id": "read by id: test/contract/read-by-id.test.ts",
  "GET /configuration-versions/:configuration_version_id/download": "a tarball go-tfe does not download; the integration's, test/http/artifacts.test.ts",
  "GET /teams/:team_id/authentication-tokens": "API tokens, not one of the six areas",
  "GET /task-results/:task_result_id/delivery-attempts": "runplane's own (D31), no go-tfe method",
  "GET /agent-pools/:agent_pool_id/agents": "agents (D34): test/contract/agents.test.ts",
  "GET /agents/:agent_id": "agents (D34): test/contract/agents.test.ts",
  "DELETE /agents/:agent_id": "runplane's own like HCP's (D46), no go-tfe method: test/agent/agent-records.test.ts",
  "POST /task-results/:task_result_id/actions/retry": "runplane's own (D31), no go-tfe method",
  "GET /organization/audit-trail": "AuditTrails.List, not JSON:API: test/audit/audit-trail-route.test.ts",
};

/** hashicorp/jsonapi's ErrorsPayload: go-tfe reads `errors[].detail` (and `status` as a string) of a 4xx. */
const ErrorDocument = z.object({ errors: z.array(z.object({ status: z.string(), title: z.string(), detail: z.string().optional() })).min(1) });

function decodeProblems(s: Sent): string[] {
  const key = routeKeyOf(s.method, s.path);
  if (!key) return [`no route for ${s.method} ${s.path}`];
  if (s.status >= 400) return problems(ErrorDocument, s.json);
  const shape = SHAPES[key];
  if (shape === undefined) return [`${key} has no shape in the contract`];
  if (shape === "empty") return s.text === "" ? [] : [`expected an empty body, got ${s.text.slice(0, 80)}`];
  if (shape === "text") return s.contentType?.startsWith("text/") ? [] : [`expected text, got ${s.contentType}`];
  if (shape === "json") return s.json === undefined ? [`expected JSON, got ${s.contentType}`] : [];
  return problems(shape, s.json);
}

const HOST = {
  runs: {
    details: () => ({
      status: "planned",
      statusTimestamps: { "planned-at": "2026-01-01T00:05:00Z" },
      hasChanges: true,
      source: "tfe-api",
      terraformVersion: "1.9.5",
      plan: { status: "finished", resourceAdditions: 1, resourceChanges: 0, resourceDestructions: 0 },
      apply: { status: "pending" },
    }),
    policyChecks: () => [{ id: "polchk-1", status: "passed", scope: "organization" as const }],
  },
  artifacts: { planJson: () => JSON.stringify({ format_version: "1.2" }), planLog: () => "plan log", applyLog: () => "apply log" },
  overridableTasks: true,
};

describe("go-tfe decodes every response of the run read side and the six areas (hcp-terraform dialect)", () => {
  let server: ContractServer | undefined;
  afterEach(async () => server?.close());

  /** The run task areas as an integration's owner and go-tfe drive them: create, attach, a run, a callback, an override. */
  async function runTasks(s: ContractServer) {
    const task = (await s.call("POST", "/organizations/acme/tasks", { body: taskBody({ name: "scan", url: "https://scan.example/hook", category: "task" }) })).json.data.id as string;
    await s.call("GET", "/organizations/acme/tasks?include=workspace_tasks&page[size]=5");
    await s.call("PATCH", `/tasks/${task}`, { body: taskBody({ description: "scans" }) });
    const wsTask = (await s.call("POST", "/workspaces/ws-a/tasks", { body: workspaceTaskBody(task, { "enforcement-level": "mandatory", stages: ["post_plan"] }) })).json.data.id as string;
    await s.call("GET", `/tasks/${task}?include=workspace_tasks.workspace`);
    await s.call("GET", "/workspaces/ws-a/tasks");
    await s.call("GET", `/workspaces/ws-a/tasks/${wsTask}`);
    await s.call("PATCH", `/workspaces/ws-a/tasks/${wsTask}`, { body: workspaceTaskBody(task, { "enforcement-level": "mandatory" }) });

    const { run, stages } = await s.app.runplane.runTasks.createRun({
      workspaceId: "ws-a",
      configurationVersionId: "cv-1",
      message: "go",
      createdBy: "user-owner",
      vcs: { branch: "main", commitHash: "abc", commitUrl: "https://git.example/c/abc" },
    });
    await s.app.runplane.runTasks.startStage(run.id, "post_plan");
    const [result] = await s.app.runplane.runTasks.listResults(stages[0]!.id);
    const body = callbackBody("failed", { message: "1 finding" }, [outcomeItem("F1", { body: "# finding", url: "https://scan.example/F1" })]);
    await s.call("PATCH", `/task-results/${result!.id}/callback`, { token: await s.accessToken(result!.id), body });
    return { task, wsTask, run, stageId: stages[0]!.id, resultId: result!.id };
  }

  async function stagesAndRun(s: ContractServer, r: Awaited<ReturnType<typeof runTasks>>) {
    await s.call("GET", `/runs/${r.run.id}/task-stages?include=task_results`);
    await s.call("GET", `/task-stages/${r.stageId}?include=task_results`);
    await s.call("GET", `/task-results/${r.resultId}`);
    const outcome = (await s.call("GET", `/task-results/${r.resultId}/outcomes`)).json.data[0].id as string;
    await s.call("GET", `/task-result-outcomes/${outcome}`);
    await s.call("GET", `/task-result-outcomes/${outcome}/body`);
    await s.call("POST", `/task-stages/${r.stageId}/actions/override`, { body: { comment: "accepted" }, plainJson: true });

    await s.call("GET", `/runs/${r.run.id}?include=plan,apply,created_by,cost_estimate,configuration_version,configuration_version.ingress_attributes,workspace,task_stages`);
    await s.call("GET", `/runs/${r.run.id}/`);
    await s.call("GET", `/runs/${r.run.id}/plan`);
    await s.call("GET", `/plans/${r.run.planId}`);
    await s.call("GET", `/plans/${r.run.planId}/json-output`);
    await s.call("GET", `/runs/${r.run.id}/apply`);
    await s.call("GET", `/applies/${r.run.applyId}`);
    const comment = (await s.call("POST", `/runs/${r.run.id}/comments`, { body: { data: { type: "comments", attributes: { body: "looks fine" } } } })).json.data.id as string;
    await s.call("GET", `/runs/${r.run.id}/comments`);
    await s.call("GET", `/comments/${comment}`);
    await s.call("GET", `/runs/${r.run.id}/run-events?include=actor,comment`);
    await s.call("GET", `/runs/${r.run.id}/policy-checks?include=run,run.workspace`);
  }

  async function variablesAndParameters(s: ContractServer) {
    const vars = "/workspaces/ws-a/vars";
    const v = (await s.call("POST", vars, { body: { data: { type: "vars", attributes: { key: "region", value: "eu", category: "terraform" } } } })).json.data.id as string;
    await s.call("POST", vars, { body: { data: { type: "vars", attributes: { key: "secret", value: "x", category: "env", sensitive: true } } } });
    await s.call("GET", vars);
    await s.call("GET", `${vars}/${v}`);
    await s.call("PATCH", `${vars}/${v}`, { body: { data: { type: "vars", attributes: { value: "us" } } } });
    await s.call("DELETE", `${vars}/${v}`);
    const params = "/policy-sets/polset-a/parameters";
    const p = (await s.call("POST", params, { body: { data: { type: "vars", attributes: { key: "limit", value: "3", category: "policy-set" } } } })).json.data.id as string;
    await s.call("GET", params);
    await s.call("GET", `${params}/${p}`);
    await s.call("PATCH", `${params}/${p}`, { body: { data: { type: "vars", attributes: { value: "4", sensitive: true } } } });
    await s.call("DELETE", `${params}/${p}`);
  }

  async function accessAndTokens(s: ContractServer) {
    const grant = { data: { type: "team-projects", attributes: { access: "read" }, relationships: { project: { data: { type: "projects", id: "prj-a" } }, team: { data: { type: "teams", id: "team-devs" } } } } };
    const tp = (await s.call("POST", "/team-projects", { body: grant })).json.data.id as string;
    await s.call("GET", "/team-projects?filter[project][id]=prj-a");
    await s.call("GET", `/team-projects/${tp}`);
    await s.call("PATCH", `/team-projects/${tp}`, { body: { data: { type: "team-projects", attributes: { access: "custom", "workspace-access": { runs: "plan" } } } } });
    await s.call("DELETE", `/team-projects/${tp}`);
    await s.app.runplane.directory.agentPools.create({ id: "apool-a", name: "pool", organization: "acme" });
    const tokens = "/agent-pools/apool-a/authentication-tokens";
    const t = (await s.call("POST", tokens, { body: { data: { type: "authentication-tokens", attributes: { description: "ci" } } } })).json.data.id as string;
    await s.call("GET", tokens);
    await s.call("GET", `/authentication-tokens/${t}`);
    await s.call("DELETE", `/authentication-tokens/${t}`);
  }

  /** go-tfe's errors: 404 (ErrResourceNotFound), 400 and 422 with a JSON:API error document. */
  async function errors(s: ContractServer, runId: string) {
    expect((await s.call("GET", "/runs/run-missing")).status).toBe(404);
    expect((await s.call("GET", `/runs/${runId}?include=costs`)).status).toBe(400);
    expect((await s.call("POST", "/workspaces/ws-a/vars", { body: { data: { type: "vars", attributes: { key: "", category: "terraform" } } } })).status).toBe(422);
  }

  it("decodes them all, and the walk calls every route of these areas", async () => {
    const s = (server = await startContractServer(HOST));
    const r = await runTasks(s);
    await stagesAndRun(s, r);
    await variablesAndParameters(s);
    await accessAndTokens(s);
    await errors(s, r.run.id);
    await s.call("DELETE", `/workspaces/ws-a/tasks/${r.wsTask}`);
    await s.call("DELETE", `/tasks/${r.task}`);

    const failed = s.sent.filter((x) => x.status >= 400 && !(x.path.startsWith("/runs/run-missing") || x.path.includes("costs") || x.path === "/workspaces/ws-a/vars"));
    expect(failed.map((x) => `${x.method} ${x.path} ${x.status} ${x.text.slice(0, 200)}`)).toStrictEqual([]);
    const found = s.sent.flatMap((x) => decodeProblems(x).map((p) => `${x.method} ${x.path}: ${p}`));
    expect(found).toStrictEqual([]);

    const called = new Set(s.sent.map((x) => routeKeyOf(x.method, x.path)));
    const missed = allRouteKeys().filter((key) => !called.has(key) && !(key in ELSEWHERE));
    expect(missed, "routes no contract covers: add them to the walk (or to ELSEWHERE with the reason)").toStrictEqual([]);
  });

  it("finds a response go-tfe would not decode: the check can fail", () => {
    const run = { id: "run-1", type: "runs", attributes: { "created-at": "2026-01-01T00:00:00+00:00" }, relationships: {} };
    const found = problems(oneDocument("Run"), { data: run });
    expect(found).toContain("data.attributes.created-at: go-tfe parses iso8601 with a literal Z");
    expect(found.some((p) => p.startsWith("data.attributes.has-changes"))).toBe(true);
    expect(found.some((p) => p.startsWith("data.relationships.plan"))).toBe(true);
    const stage = { id: "ts-1", type: "task-stages", attributes: { "status-timestamps": { "running-at": "yesterday" } } };
    expect(problems(oneDocument("TaskStage"), { data: stage })).toContain("data.attributes.status-timestamps.running-at: not RFC 3339");
    expect(problems(listDocument("Variable"), { data: [] })).toContain("meta: Invalid input: expected object, received undefined");
    const included = [{ id: "user-1", type: "users", attributes: { username: 7 } }, { id: "ce-1", type: "cost-estimates", attributes: {} }];
    expect(problems(oneDocument("Comment"), { data: { id: "wsc-1", type: "comments", attributes: { body: "x" } }, included })).toStrictEqual([
      "included.0.attributes.username: User: Invalid input: expected string, received number",
      "included.1: no go-tfe struct decodes an included cost-estimates",
    ]);
  });
});
