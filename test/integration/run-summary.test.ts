import { afterEach, describe, expect, it, vi } from "vitest";
import { createExampleIntegration } from "../../examples/integration/server.js";
import { listen } from "../../examples/server/integration.js";
import { createDispatcher, createEgress, type Dialect } from "../../src/index.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { attachTask, taskBody } from "../helpers/run-tasks.js";

/**
 * The run read side (D24) end to end over real HTTP: runplane delivers a run task request to the example
 * integration in its run summary mode, which reads the run back through the API with an API token
 * (`GET /runs/:id/`, plan, apply, policy checks, comments, run events) and the plan's and the
 * apply's logs at their `log-read-url` with no credential (D32), comments on the run and reports
 * the summary as an outcome, in both dialects.
 */
const KEY = "summary-secret";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const PLAN = { format_version: "1.2", resource_changes: [{ address: "null_resource.a", change: { actions: ["create"] } }] };

async function setUp(dialect: Dialect, token: (a: TestApp) => string) {
  let integration: ReturnType<typeof createExampleIntegration> | undefined;
  let app: TestApp | undefined;
  const integrationServer = await listen((request) => integration!.handler(request), 0, "127.0.0.1");
  // What the log reads carried: the path's kind and whether an Authorization header came along.
  const logReads: { query: string; authorized: boolean }[] = [];
  const apiServer = await listen((request) => {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/api/v2/logs/")) logReads.push({ query: url.search, authorized: request.headers.has("authorization") });
    return app!.runplane.handler(request);
  }, 0, "127.0.0.1");
  closers.push(integrationServer.close, apiServer.close);
  const allow = [`127.0.0.1:${integrationServer.port}`];
  const transport = createEgress({ allow });
  closers.push(() => transport.close());
  app = await createTestApp({
    dialect,
    egress: { allow },
    publicUrl: `http://127.0.0.1:${apiServer.port}`,
    transport,
    artifacts: { planJson: () => PLAN, planLog: () => "Plan: 1 to add, 0 to change, 0 to destroy.\n\nSaved.\n", applyLog: () => "Apply complete! Resources: 1 added.\n" },
    runs: {
      details: () => ({ status: "post_plan_running", terraformVersion: "1.9.5", hasChanges: true, plan: { status: "finished", resourceAdditions: 1, resourceChanges: 0, resourceDestructions: 0 } }),
    },
  });
  const errors: unknown[] = [];
  integration = createExampleIntegration({ hmacKey: KEY, summary: { apiToken: token(app) }, onError: (error) => errors.push(error) });
  const created = await app.call("POST", "/api/v2/organizations/acme/tasks", { body: taskBody({ name: "summary", url: `http://127.0.0.1:${integrationServer.port}/`, "hmac-key": KEY }) });
  expect(created.status, created.text).toBe(201);
  await attachTask(app, created.json.data.id, "mandatory");
  const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go", createdBy: "user-owner" });
  await app.runplane.runTasks.startStage(run.id, "post_plan");
  expect(await createDispatcher(app.runplane).tick()).toMatchObject({ delivered: 1 });
  await vi.waitFor(async () => expect(["passed", "failed"]).toContain((await app!.runplane.runTasks.getStage(run.id, "post_plan"))!.status), { timeout: 10_000 });
  const [result] = await app.runplane.runTasks.listResults(stages[0]!.id);
  return { app, run, result: result!, errors, logReads };
}

describe("the example integration's run summary over HTTP", () => {
  it.each(["default", "hcp-terraform"] as Dialect[])("reads the whole run, comments on it and passes (%s dialect)", async (dialect) => {
    const { app, run, result, errors, logReads } = await setUp(dialect, (a) => a.ownerToken);
    expect(errors).toEqual([]);
    expect(result).toMatchObject({ status: "passed", message: "Nothing to report" });
    const outcomes = (await app.call("GET", `/api/v2/task-results/${result.id}/outcomes`)).json.data;
    const summary = outcomes.find((o: any) => o.attributes["outcome-id"] === "EXAMPLE-003");
    const body = await (await app.call("GET", `/api/v2/task-result-outcomes/${summary.id}/body`)).text;
    expect(body).toContain(`| Run | \`${run.id}\` \`post_plan_running\` |`);
    expect(body).toContain("| Terraform | `1.9.5` |");
    expect(body).toContain("| Plan | `finished` +1 ~0 -0 |");
    // The host said nothing of the apply: left out (default) or "" (hcp-terraform), shown as "-".
    expect(body).toContain("| Apply | - |");
    expect(body).toContain("| Task stages | 1 |");
    expect(body).toContain("| Plan log | 2 lines |");
    expect(body).toContain("| Apply log | 1 line |");
    // D32: both logs read at log-read-url without a credential, in go-tfe's chunks (the second empty).
    expect(logReads).toHaveLength(4);
    expect(logReads.every((r) => !r.authorized && /^\?limit=65536&offset=\d+$/.test(r.query))).toBe(true);
    // The run events it read: creation and the stage's start at least.
    expect(Number(/\| Run events \| (\d+) \|/.exec(body)![1])).toBeGreaterThanOrEqual(2);
    const comments = (await app.call("GET", `/api/v2/runs/${run.id}/comments`)).json.data;
    expect(comments.map((c: any) => c.attributes.body)).toStrictEqual([body]);
  });

  it("fails the check, naming the read, when its token may not read the run (the upstream symptom)", async () => {
    const { app, run, result } = await setUp("hcp-terraform", (a) => a.devToken);
    expect(result.status).toBe("failed");
    expect(result.message).toBe(`The run could not be read: GET /api/v2/runs/${run.id}/ answered 404`);
    expect((await app.storage.comments.listByRun(run.id)).total).toBe(0);
  });
});
