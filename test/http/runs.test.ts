import { afterEach, describe, expect, it } from "vitest";
import type { Dialect, Logger, RunplaneOptions } from "../../src/index.js";
import { silentLogger } from "../../src/index.js";
import { STORAGES } from "../helpers/storages.js";
import { attachTask, callbackBody, createTask, runTaskApp, sendCallback, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";

/** Decision D24: the read side of a run that integrations call, in both dialects (D1). */

const DETAILS = {
  status: "planned_and_finished",
  statusTimestamps: { "plan-queued-at": "2026-01-01T00:00:01Z", "planned-and-finished-at": new Date(Date.UTC(2026, 0, 1, 0, 0, 9)) },
  hasChanges: true,
  terraformVersion: "1.9.5",
  source: "tfe-api",
  plan: { status: "finished", resourceAdditions: 2, resourceChanges: 1, resourceDestructions: 0, statusTimestamps: { "finished-at": "2026-01-01T00:00:08Z" } },
  apply: { status: "unreachable" },
};

describe.each(STORAGES)("the run read side ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = (options: Partial<RunplaneOptions> = {}): Promise<RunTaskApp> => runTaskApp(setup, (d) => (dispose = d), options);

  /** A run of ws-a with one task on post_plan, its stage started; the result's id and access token. */
  async function started(a: RunTaskApp, workspaceId = "ws-a") {
    await attachTask(a, await createTask(a, `scan-${workspaceId}`), "mandatory", ["post_plan"], workspaceId);
    const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId, configurationVersionId: "cv-1", message: "go", createdBy: "user-owner" });
    await a.runplane.runTasks.startStage(run.id, "post_plan");
    const [result] = await a.runplane.runTasks.listResults(stages[0]!.id);
    return { run, stageId: stages[0]!.id, resultId: result!.id, token: await tokenOf(a, result!.id) };
  }

  it("writes a run from what runplane stores, its relationships, and nothing the host did not give (default dialect)", async () => {
    const a = await app();
    const { run, stageId } = await started(a);
    const res = await a.call("GET", `/api/v2/runs/${run.id}`);
    expect(res.status).toBe(200);
    const data = res.json.data;
    expect(data).toMatchObject({ id: run.id, type: "runs", links: { self: `/api/v2/runs/${run.id}` } });
    expect(data.attributes).toStrictEqual({ message: "go", "created-at": run.createdAt, "is-speculative": false, "plan-only": false });
    expect(data.relationships["task-stages"]).toStrictEqual({ data: [{ type: "task-stages", id: stageId }], links: { related: `/api/v2/runs/${run.id}/task-stages` } });
    expect(data.relationships.plan.data).toStrictEqual({ type: "plans", id: run.planId });
    expect(data.relationships.apply.data).toStrictEqual({ type: "applies", id: run.applyId });
    expect(data.relationships.workspace.data).toStrictEqual({ type: "workspaces", id: "ws-a" });
    expect(data.relationships["configuration-version"].data).toStrictEqual({ type: "configuration-versions", id: "cv-1" });
    expect(data.relationships["created-by"].data).toStrictEqual({ type: "users", id: "user-owner" });
    expect(data.relationships["policy-checks"].data).toStrictEqual([]);
  });

  it("answers the same run with a trailing slash, as one upstream integration asks", async () => {
    const a = await app();
    const { run } = await started(a);
    const slash = await a.call("GET", `/api/v2/runs/${run.id}/`);
    expect(slash.status).toBe(200);
    expect(slash.json).toStrictEqual((await a.call("GET", `/api/v2/runs/${run.id}`)).json);
  });

  it("writes go-tfe's zero values for what the host did not give in the hcp-terraform dialect, and the host's values when it gives them", async () => {
    const bare = await app({ dialect: "hcp-terraform" });
    const { run } = await started(bare);
    const attributes = (await bare.call("GET", `/api/v2/runs/${run.id}`)).json.data.attributes;
    expect(attributes).toMatchObject({ status: "", "status-timestamps": {}, "has-changes": false, "terraform-version": "", source: "", "position-in-queue": 0, "force-cancel-available-at": null, variables: [] });
    expect(attributes.actions).toStrictEqual({ "is-cancelable": false, "is-confirmable": false, "is-discardable": false, "is-force-cancelable": false });
    dispose();

    for (const dialect of ["default", "hcp-terraform"] as Dialect[]) {
      const a = await app({ dialect, runs: { details: async () => DETAILS } });
      const s = await started(a);
      const attrs = (await a.call("GET", `/api/v2/runs/${s.run.id}`)).json.data.attributes;
      expect(attrs).toMatchObject({ status: "planned_and_finished", "has-changes": true, "terraform-version": "1.9.5", source: "tfe-api" });
      // D9: status timestamps as task stages write them, whether the host gave a string or a Date.
      expect(attrs["status-timestamps"]).toStrictEqual({ "plan-queued-at": "2026-01-01T00:00:01.000+00:00", "planned-and-finished-at": "2026-01-01T00:00:09.000+00:00" });
      expect("is-destroy" in attrs).toBe(dialect === "hcp-terraform");
      dispose();
    }
  });

  it("includes task stages, plan, apply and workspace on request (either spelling); an unknown include is 400", async () => {
    const a = await app({ runs: { details: () => DETAILS } });
    const { run, stageId } = await started(a);
    const res = await a.call("GET", `/api/v2/runs/${run.id}?include=task_stages,plan`);
    expect(res.status).toBe(200);
    expect(res.json.included.map((r: any) => `${r.type}:${r.id}`)).toStrictEqual([`task-stages:${stageId}`, `plans:${run.planId}`]);
    expect(res.json.included[1].attributes["resource-additions"]).toBe(2);
    const all = await a.call("GET", `/api/v2/runs/${run.id}?include=task-stages,apply,workspace`);
    expect(all.json.included.map((r: any) => r.type)).toStrictEqual(["task-stages", "applies", "workspaces"]);
    const bad = await a.call("GET", `/api/v2/runs/${run.id}?include=costs`);
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].detail).toContain("Invalid include parameter");
    expect((await a.call("GET", `/api/v2/runs/${run.id}`)).json.included).toBeUndefined();
  });

  it("answers a task stage's include=run with the whole run", async () => {
    const a = await app({ runs: { details: () => DETAILS } });
    const { run, stageId } = await started(a);
    const res = await a.call("GET", `/api/v2/task-stages/${stageId}?include=run`);
    expect(res.json.included[0]).toStrictEqual((await a.call("GET", `/api/v2/runs/${run.id}`)).json.data);
  });

  it("shows the plan and the apply by run and by id, log-read-url null without a log provider", async () => {
    const a = await app({ runs: { details: () => DETAILS } });
    const { run } = await started(a);
    const plan = (await a.call("GET", `/api/v2/runs/${run.id}/plan`)).json.data;
    expect(plan).toMatchObject({ id: run.planId, type: "plans", links: { self: `/api/v2/plans/${run.planId}` } });
    expect(plan.attributes).toStrictEqual({
      "log-read-url": null, status: "finished", "status-timestamps": { "finished-at": "2026-01-01T00:00:08.000+00:00" },
      "resource-additions": 2, "resource-changes": 1, "resource-destructions": 0,
    });
    expect((await a.call("GET", `/api/v2/plans/${run.planId}`)).json).toStrictEqual({ data: plan });
    const apply = (await a.call("GET", `/api/v2/runs/${run.id}/apply`)).json.data;
    expect(apply).toMatchObject({ id: run.applyId, type: "applies", attributes: { "log-read-url": null, status: "unreachable" } });
    expect((await a.call("GET", `/api/v2/applies/${run.applyId}`)).json).toStrictEqual({ data: apply });
    expect((await a.call("GET", "/api/v2/plans/plan-nope")).status).toBe(404);
    expect((await a.call("GET", "/api/v2/applies/apply-nope")).status).toBe(404);
  });

  it("serves the logs at log-read-url, in the byte chunks go-tfe's log reader asks for", async () => {
    const log = "Terraform will perform the following actions: ✓\n";
    const a = await app({ artifacts: { planLog: () => log, applyLog: () => null } });
    const { run } = await started(a);
    const url = (await a.call("GET", `/api/v2/plans/${run.planId}`)).json.data.attributes["log-read-url"];
    // decision D32: a capability URL; it needs no credential (test/http/log-capability-urls.test.ts).
    expect(url).toMatch(/^https:\/\/runplane\.example\/api\/v2\/logs\/rplog1\.[\w-]+\.[\w-]+$/);
    const path = new URL(url).pathname;
    const whole = await a.call("GET", path);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(whole.text).toBe(log);
    const bytes = new TextEncoder().encode(log);
    const chunk = async (offset: number, limit: number) =>
      new Uint8Array(await (await a.runplane.handler(new Request(`http://localhost${path}?limit=${limit}&offset=${offset}`, { headers: { authorization: `Bearer ${a.ownerToken}` } }))).arrayBuffer());
    expect(await chunk(0, 9)).toStrictEqual(bytes.subarray(0, 9));
    expect(await chunk(9, 1000)).toStrictEqual(bytes.subarray(9));
    expect(await chunk(bytes.length, 10)).toStrictEqual(new Uint8Array());
    expect((await a.call("GET", `${path}?offset=-1`)).status).toBe(400);
    // The apply log provider has nothing for this run: 404 naming the option.
    const applyUrl = (await a.call("GET", `/api/v2/runs/${run.id}/apply`)).json.data.attributes["log-read-url"];
    const missing = await a.call("GET", new URL(applyUrl).pathname);
    expect(missing.status).toBe(404);
    expect(missing.json.errors[0].detail).toContain("artifacts.applyLog");
  });

  it("lets a result's access token read its own run's plan and plan log only (D24)", async () => {
    const a = await app({ artifacts: { planLog: () => "log", applyLog: () => "log" } });
    const mine = await started(a);
    const other = await started(a, "ws-b");
    const token = mine.token;
    expect((await a.call("GET", `/api/v2/runs/${mine.run.id}/plan`, { token })).status).toBe(200);
    expect((await a.call("GET", `/api/v2/plans/${mine.run.planId}`, { token })).status).toBe(200);
    expect((await a.call("GET", `/api/v2/plans/${mine.run.planId}/log`, { token })).text).toBe("log");
    // Another run's plan: a valid credential without access (D4).
    expect((await a.call("GET", `/api/v2/runs/${other.run.id}/plan`, { token })).status).toBe(404);
    expect((await a.call("GET", `/api/v2/plans/${other.run.planId}/log`, { token })).status).toBe(404);
    // Not an API credential: the run, its apply and its apply log are 401.
    for (const path of [`/runs/${mine.run.id}`, `/runs/${mine.run.id}/apply`, `/applies/${mine.run.applyId}`, `/applies/${mine.run.applyId}/log`, `/runs/${mine.run.id}/comments`]) {
      expect((await a.call("GET", `/api/v2${path}`, { token })).status, path).toBe(401);
    }
    // A final result's token no longer reads anything.
    expect((await sendCallback(a, mine.resultId, token, callbackBody("passed"))).status).toBe(200);
    expect((await a.call("GET", `/api/v2/plans/${mine.run.planId}`, { token })).status).toBe(401);
  });

  it("lists the run's events: creation, stage and result statuses, override and comments, oldest first", async () => {
    const a = await app({ overridableTasks: true });
    const { run, stageId, resultId, token } = await started(a);
    await sendCallback(a, resultId, token, callbackBody("failed", { message: "2 findings" }));
    await a.call("POST", `/api/v2/task-stages/${stageId}/actions/override`, { body: { comment: "accepted" }, contentType: "application/json" });
    const comment = await a.call("POST", `/api/v2/runs/${run.id}/comments`, { body: { data: { type: "comments", attributes: { body: "looked at it" } } } });
    const res = await a.call("GET", `/api/v2/runs/${run.id}/run-events`);
    expect(res.status).toBe(200);
    expect(res.json.meta).toBeUndefined();
    const actions = res.json.data.map((e: any) => e.attributes.action);
    expect(actions[0]).toBe("created");
    expect(actions).toEqual(expect.arrayContaining(["task_stage_running", "task_result_failed", "task_stage_awaiting_override", "overridden", "task_stage_passed", "commented"]));
    expect(actions.at(-1)).toBe("commented");
    const failed = res.json.data.find((e: any) => e.attributes.action === "task_result_failed");
    expect(failed.attributes.description).toBe("Run task scan-ws-a failed: 2 findings");
    expect(failed.relationships.target.data).toStrictEqual({ type: "task-results", id: resultId });
    const overridden = res.json.data.find((e: any) => e.attributes.action === "overridden");
    expect(overridden.attributes.description).toContain("accepted");
    const commented = res.json.data.at(-1);
    expect(commented.relationships.actor.data).toStrictEqual({ type: "users", id: "user-owner" });
    expect(commented.relationships.comment.data).toStrictEqual({ type: "comments", id: comment.json.data.id });
    // The comment names its event; event ids are stable between reads.
    expect(comment.json.data.relationships["run-event"].data).toStrictEqual({ type: "run-events", id: commented.id });
    expect((await a.call("GET", `/api/v2/runs/${run.id}/run-events`)).json).toStrictEqual(res.json);
    const withIncludes = await a.call("GET", `/api/v2/runs/${run.id}/run-events?include=actor,comment`);
    expect(withIncludes.json.included).toStrictEqual([
      { type: "users", id: "user-owner", attributes: { username: "owner" } },
      comment.json.data,
    ]);
  });

  it("stores comments an API token writes, lists them paged, shows one, and refuses a bad one without storing it", async () => {
    const a = await app();
    const { run } = await started(a);
    const post = (body: unknown, token?: string) => a.call("POST", `/api/v2/runs/${run.id}/comments`, { body, token });
    const first = await post({ data: { type: "comments", attributes: { body: "first" }, relationships: { run: { data: { type: "runs", id: run.id } } } } });
    expect(first.status).toBe(201);
    expect(first.json.data).toMatchObject({ type: "comments", attributes: { body: "first" }, links: { self: `/api/v2/comments/${first.json.data.id}` } });
    expect(first.json.data.id).toMatch(/^wsc-[0-9A-Za-z]{16}$/);
    await post({ data: { type: "comments", attributes: { body: "second" } } });
    for (const [body, pointer] of [
      [{ data: { type: "comments", attributes: { body: "  " } } }, "/data/attributes/body"],
      [{ data: { type: "comments", attributes: {} } }, "/data/attributes/body"],
      [{ data: { type: "comments", attributes: { body: "x".repeat(65_537) } } }, "/data/attributes/body"],
      [{ data: { type: "vars", attributes: { body: "x" } } }, "/data/type"],
      [{ data: { type: "comments", attributes: { body: "x" }, relationships: { run: { data: { type: "runs", id: "run-other" } } } } }, "/data/relationships/run"],
    ] as const) {
      const bad = await post(body);
      expect(bad.status, pointer).toBe(422);
      expect(bad.json.errors[0].source.pointer).toBe(pointer);
    }
    const list = await a.call("GET", `/api/v2/runs/${run.id}/comments?page%5Bsize%5D=1`);
    expect(list.json.data.map((c: any) => c.attributes.body)).toStrictEqual(["first"]);
    expect(list.json.meta.pagination["total-count"]).toBe(2);
    expect((await a.call("GET", `/api/v2/comments/${first.json.data.id}`)).json).toStrictEqual({ data: first.json.data });
    expect((await a.call("GET", `/api/v2/runs/${run.id}`)).json.data.relationships.comments.data).toHaveLength(2);
    // Another organization and a member without access see none of it (D4).
    for (const token of [a.devToken, a.otherOrgToken]) {
      expect((await post({ data: { type: "comments", attributes: { body: "x" } } }, token)).status).toBe(404);
      expect((await a.call("GET", `/api/v2/comments/${first.json.data.id}`, { token })).status).toBe(404);
    }
    expect((await a.storage.comments.listByRun(run.id)).total).toBe(2);
  });

  it("refuses a comment beyond a run's 1,000 with 422 and stores nothing", async () => {
    const a = await app();
    const { run } = await started(a);
    for (let i = 0; i < 999; i++) {
      const id = `wsc-${String(i).padStart(16, "0")}`;
      await a.storage.comments.insert({ id, runId: run.id, workspaceId: "ws-a", organization: "acme", body: "x", authorId: null, createdAt: run.createdAt }, 1000);
    }
    const body = { data: { type: "comments", attributes: { body: "the last one" } } };
    expect((await a.call("POST", `/api/v2/runs/${run.id}/comments`, { body })).status).toBe(201);
    const refused = await a.call("POST", `/api/v2/runs/${run.id}/comments`, { body });
    expect(refused.status).toBe(422);
    expect(refused.json.errors[0].detail).toBe("A run holds at most 1000 comments");
    expect((await a.storage.comments.listByRun(run.id)).total).toBe(1000);
  });

  it("lists the host's policy checks paged, an empty list without them, zero values in hcp-terraform", async () => {
    const empty = await app();
    const e = await started(empty);
    const none = await empty.call("GET", `/api/v2/runs/${e.run.id}/policy-checks`);
    expect(none.status).toBe(200);
    expect(none.json.data).toStrictEqual([]);
    expect(none.json.meta.pagination["total-count"]).toBe(0);
    dispose();

    const checks = [
      { id: "polchk-1", status: "passed", scope: "organization" as const, result: { result: true, passed: 3, totalFailed: 0, hardFailed: 0, softFailed: 0, advisoryFailed: 0, duration: 120 } },
      { id: "polchk-2", status: "soft_failed" },
    ];
    for (const dialect of ["default", "hcp-terraform"] as Dialect[]) {
      const a = await app({ dialect, runs: { policyChecks: () => checks } });
      const { run } = await started(a);
      const page = await a.call("GET", `/api/v2/runs/${run.id}/policy-checks?page%5Bsize%5D=1&page%5Bnumber%5D=2`);
      expect(page.json.data.map((c: any) => c.id)).toStrictEqual(["polchk-2"]);
      expect(page.json.meta.pagination["total-count"]).toBe(2);
      const first = (await a.call("GET", `/api/v2/runs/${run.id}/policy-checks`)).json.data[0];
      expect(first.attributes.result).toStrictEqual({ result: true, passed: 3, "total-failed": 0, "hard-failed": 0, "soft-failed": 0, "advisory-failed": 0, duration: 120 });
      expect(first.relationships.run.data).toStrictEqual({ type: "runs", id: run.id });
      const second = (await a.call("GET", `/api/v2/runs/${run.id}/policy-checks`)).json.data[1].attributes;
      expect(second.scope).toBe(dialect === "hcp-terraform" ? "" : undefined);
      expect((await a.call("GET", `/api/v2/runs/${run.id}`)).json.data.relationships["policy-checks"].data).toStrictEqual([
        { type: "policy-checks", id: "polchk-1" },
        { type: "policy-checks", id: "polchk-2" },
      ]);
      dispose();
    }
  });

  it("ignores host data that does not fit, logging where, and still answers with what runplane knows", async () => {
    const warnings: unknown[][] = [];
    const logger: Logger = { ...silentLogger, warn: (...args: unknown[]) => void warnings.push(args) };
    const a = await app({ logger, runs: { details: () => ({ status: "Applied!", hasChanges: true }) as never, policyChecks: () => [{ status: "passed" }] as never } });
    const { run } = await started(a);
    const res = await a.call("GET", `/api/v2/runs/${run.id}`);
    expect(res.status).toBe(200);
    expect(res.json.data.attributes.status).toBeUndefined();
    expect(res.json.data.attributes["has-changes"]).toBeUndefined();
    expect(warnings.map(([message, fields]) => [message, (fields as { path: string }).path])).toStrictEqual([
      ["option runs.details returned a value runplane cannot use; ignored", "status"],
      ["option runs.policyChecks returned a value runplane cannot use; ignored", "0.id"],
    ]);
  });

  it("answers 401 without a credential and 404 for an unknown run or one the caller may not read", async () => {
    const a = await app();
    const { run } = await started(a);
    const paths = ["", "/plan", "/apply", "/run-events", "/comments", "/policy-checks"].map((p) => `/api/v2/runs/${run.id}${p}`);
    for (const path of paths) {
      expect((await a.call("GET", path, { token: null })).status, path).toBe(401);
      expect((await a.call("GET", path, { token: a.devToken })).status, path).toBe(404);
      expect((await a.call("GET", path, { token: a.otherOrgToken })).status, path).toBe(404);
      expect((await a.call("GET", path.replace(run.id, "run-nope"))).status, path).toBe(404);
    }
  });
});
