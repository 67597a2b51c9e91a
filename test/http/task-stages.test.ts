import { afterEach, describe, expect, it } from "vitest";
import { RunTaskRequestSchema } from "../../src/schemas/run-tasks.js";
import { STORAGES } from "../helpers/storages.js";
import {
  attachTask,
  callbackBody,
  outcomeItem,
  createTask,
  deliverDue,
  payloadOf,
  runTaskApp,
  sendCallback,
  startedRun,
  tokenOf,
  type RunTaskApp,
} from "../helpers/run-tasks.js";

const STAGE_ATTRIBUTES = ["actions", "created-at", "permissions", "stage", "status", "status-timestamps", "updated-at"];
// decision D34: a result names its agent pool and agent (nulls for a direct task).
const RESULT_ATTRIBUTES = [
  "agent-connected",
  "agent-id",
  "agent-last-seen-at",
  "agent-name",
  "agent-pool-id",
  "agent-pool-name",
  "created-at",
  "is-speculative",
  "message",
  "stage",
  "status",
  "status-timestamps",
  "task-id",
  "task-name",
  "task-result-outcomes-count",
  "task-url",
  "updated-at",
  "url",
  "waiting-for-agent",
  "workspace-task-enforcement-level",
  "workspace-task-id",
];
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/;

describe.each(STORAGES)("task stages and results over HTTP ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = (options: Parameters<typeof runTaskApp>[2] = {}): Promise<RunTaskApp> =>
    runTaskApp(setup, (d) => (dispose = d), options);

  /** Reports a final status for each result, in order. */
  const finish = async (a: RunTaskApp, resultIds: string[], statuses: string[]) => {
    for (const [i, id] of resultIds.entries()) {
      const res = await sendCallback(a, id, await tokenOf(a, id), callbackBody(statuses[i]!));
      expect(res.status).toBe(200);
    }
  };
  const stageOf = async (a: RunTaskApp, stageId: string) => (await a.call("GET", `/api/v2/task-stages/${stageId}`)).json.data;

  it("gives a workspace with two tasks one post-plan stage holding two pending results", async () => {
    const a = await app();
    const t1 = await createTask(a, "first");
    const t2 = await createTask(a, "second");
    const w1 = await attachTask(a, t1, "mandatory");
    await attachTask(a, t2, "advisory");
    const { run, stages, created } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
    expect(created).toBe(true);
    expect(stages.map((s) => [s.stage, s.status])).toStrictEqual([["post_plan", "pending"]]);

    const list = await a.call("GET", `/api/v2/runs/${run.id}/task-stages`);
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(1);
    expect(list.json.meta.pagination).toMatchObject({ "current-page": 1, "page-size": 20, "total-count": 1 });
    const stage = list.json.data[0];
    expect(stage.id).toMatch(/^ts-[0-9A-Za-z]{16}$/);
    expect(Object.keys(stage.attributes).sort()).toStrictEqual(STAGE_ATTRIBUTES);
    expect(stage.attributes).toMatchObject({ status: "pending", stage: "post_plan", "status-timestamps": {} });
    expect(stage.attributes.permissions).toStrictEqual({ "can-override-policy": true, "can-override-tasks": false, "can-override": true });
    expect(stage.attributes.actions).toStrictEqual({ "is-overridable": false });
    expect(stage.relationships.run.data).toStrictEqual({ type: "runs", id: run.id });
    expect(stage.relationships["policy-evaluations"].data).toStrictEqual([]);
    expect(stage.relationships["task-results"].data).toHaveLength(2);

    const resultId = stage.relationships["task-results"].data[0].id;
    const result = await a.call("GET", `/api/v2/task-results/${resultId}`);
    expect(result.status).toBe(200);
    expect(Object.keys(result.json.data.attributes).sort()).toStrictEqual(RESULT_ATTRIBUTES);
    expect(result.json.data.attributes).toMatchObject({
      status: "pending",
      "task-id": t1,
      "task-name": "first",
      "task-url": "https://first.example/hook",
      "workspace-task-id": w1,
      "workspace-task-enforcement-level": "mandatory",
      "task-result-outcomes-count": 0,
      "agent-pool-id": null,
      "is-speculative": false,
      stage: "post_plan",
    });
    expect(result.json.data.relationships["task-stage"].data).toStrictEqual({ type: "task-stages", id: stage.id });
  });

  it("lists a result's outcome ids, in received order, as the data of its task-result-outcomes relationship", async () => {
    const a = await app();
    const { stageId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    const [withOutcomes, without] = resultIds as [string, string];
    const body = callbackBody("passed", {}, [outcomeItem("B"), outcomeItem("A")]);
    expect((await sendCallback(a, withOutcomes, await tokenOf(a, withOutcomes), body)).status).toBe(200);
    const ids = (await a.call("GET", `/api/v2/task-results/${withOutcomes}/outcomes`)).json.data.map((o: any) => o.id);
    expect(ids).toHaveLength(2);
    const linkage = ids.map((id: string) => ({ type: "task-result-outcomes", id }));

    const shown = (await a.call("GET", `/api/v2/task-results/${withOutcomes}`)).json.data.relationships["task-result-outcomes"];
    expect(shown.data).toStrictEqual(linkage);
    expect(shown.links.related).toBe(`/api/v2/task-results/${withOutcomes}/outcomes`);
    const empty = (await a.call("GET", `/api/v2/task-results/${without}`)).json.data.relationships["task-result-outcomes"];
    expect(empty.data).toStrictEqual([]);

    const included = (await a.call("GET", `/api/v2/task-stages/${stageId}?include=task_results`)).json.included;
    const byId = new Map(included.map((r: any) => [r.id, r.relationships["task-result-outcomes"].data]));
    expect(byId.get(withOutcomes)).toStrictEqual(linkage);
    expect(byId.get(without)).toStrictEqual([]);
  });

  it("sends the run's commit hash as vcs_commit_hash, and null for a run created without one", async () => {
    const a = await app();
    await attachTask(a, await createTask(a, "scan"), "mandatory");
    const vcs = { branch: "main", repoUrl: "https://github.com/acme/alpha", commitUrl: null, commitHash: "0f1e2d3c" };
    const sentHash = async (runVcs: typeof vcs | null, id: string) => {
      const { run, stages } = await a.runplane.runTasks.createRun({ id, workspaceId: "ws-a", configurationVersionId: "cv-1", vcs: runVcs });
      await a.runplane.runTasks.startStage(run.id, stages[0]!.stage);
      const [result] = await a.runplane.runTasks.listResults(stages[0]!.id);
      return (await payloadOf(a.storage, a.keyring, result!.id)).vcs_commit_hash;
    };
    expect(await sentHash(vcs, "run-withhash")).toBe("0f1e2d3c");
    expect(await sentHash(null, "run-nohash")).toBeNull();
  });

  it("creates one stage per run stage that has tasks, in run order, and skips disabled tasks", async () => {
    const a = await app();
    await attachTask(a, await createTask(a, "pre"), "mandatory", ["pre_plan", "post_plan"]);
    await attachTask(a, await createTask(a, "late"), "advisory", ["post_apply"]);
    await attachTask(a, await createTask(a, "off", { enabled: false }), "mandatory", ["pre_apply"]);
    await attachTask(a, await createTask(a, "elsewhere"), "mandatory", ["pre_apply"], "ws-b");
    const { stages } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
    expect(stages.map((s) => s.stage)).toStrictEqual(["pre_plan", "post_plan", "post_apply"]);
    const page = await a.call("GET", `/api/v2/runs/${stages[0]!.runId}/task-stages?page[size]=2&page[number]=2`);
    expect(page.json.data.map((d: any) => d.attributes.stage)).toStrictEqual(["post_apply"]);
    expect(page.json.meta.pagination).toMatchObject({ "total-count": 3, "total-pages": 2, "prev-page": 1 });
  });

  it("creates no stage for a workspace without tasks", async () => {
    const a = await app();
    const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
    expect(stages).toStrictEqual([]);
    expect((await a.call("GET", `/api/v2/runs/${run.id}/task-stages`)).json.data).toStrictEqual([]);
  });

  it("is idempotent per run id: repeated and racing creates never duplicate stages or results", async () => {
    const a = await app();
    await attachTask(a, await createTask(a, "one"), "mandatory");
    const input = { id: "run-HOSTCHOSEN000001", workspaceId: "ws-a", configurationVersionId: "cv-1" };
    const first = await a.runplane.runTasks.createRun(input);
    const again = await a.runplane.runTasks.createRun({ ...input, message: "different" });
    expect(again.created).toBe(false);
    expect(again.stages.map((s) => s.id)).toStrictEqual(first.stages.map((s) => s.id));
    expect(again.run.message).toBe(first.run.message);

    const raced = await Promise.all(Array.from({ length: 8 }, () => a.runplane.runTasks.createRun({ ...input, id: "run-RACED0000000001" })));
    expect(raced.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(raced.map((r) => r.stages[0]!.id)).size).toBe(1);
    const stages = await a.runplane.runTasks.listStages("run-RACED0000000001");
    expect(stages.total).toBe(1);
    expect(await a.runplane.runTasks.listResults(stages.items[0]!.id)).toHaveLength(1);
    await expect(a.runplane.runTasks.createRun({ ...input, workspaceId: "ws-b" })).rejects.toMatchObject({ status: 409 });
  });

  it("starts a stage once: tokens issued as digests, one sealed outbox row per result, a second start is 409", async () => {
    const a = await app();
    const { runId, stageId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    const stage = await stageOf(a, stageId);
    expect(stage.attributes.status).toBe("running");
    expect(stage.attributes["status-timestamps"]["running-at"]).toMatch(RFC3339);
    await expect(a.runplane.runTasks.startStage(runId, "post_plan")).rejects.toMatchObject({ status: 409, message: "transition not allowed" });
    await expect(a.runplane.runTasks.startStage(runId, "pre_plan")).rejects.toMatchObject({ status: 404 });

    for (const id of resultIds) {
      const rows = await a.storage.taskDeliveries.listByResult(id);
      expect(rows).toHaveLength(1);
      const row = rows[0]!;
      expect(row).toMatchObject({ attempt: 0, fencingToken: 0, leaseOwner: null, deliveredAt: null, stageId, runId });
      const payload = await payloadOf(a.storage, a.keyring, id);
      expect(RunTaskRequestSchema.safeParse(payload).success).toBe(true);
      expect(payload).toMatchObject({
        stage: "post_plan",
        run_id: runId,
        task_result_id: id,
        task_result_callback_url: `https://runplane.example/api/v2/task-results/${id}/callback`,
        workspace_name: "alpha-ws",
        organization_name: "acme",
      });
      // decision D17: the token rests only sealed in the outbox and as a digest on the result.
      expect(row.payload).not.toContain(payload.access_token);
      const stored = await a.storage.taskResults.get(id);
      expect(JSON.stringify(stored)).not.toContain(payload.access_token);
      expect(stored!.accessTokenDigest).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it("passes a stage whose only failure is advisory", async () => {
    const a = await app();
    const { stageId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    await finish(a, resultIds, ["passed", "failed"]);
    const stage = await stageOf(a, stageId);
    expect(stage.attributes.status).toBe("passed");
    expect(Object.keys(stage.attributes["status-timestamps"]).sort()).toStrictEqual(["passed-at", "running-at"]);
  });

  it("fails a stage whose mandatory task failed", async () => {
    const a = await app();
    const { stageId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    await finish(a, resultIds, ["failed", "passed"]);
    expect((await stageOf(a, stageId)).attributes.status).toBe("failed");
    const override = await a.call("POST", `/api/v2/task-stages/${stageId}/actions/override`);
    expect(override.status).toBe(409);
    expect(override.json.errors[0]).toMatchObject({ status: "409", title: "conflict", detail: "transition not allowed" });
  });

  it("with overridableTasks awaits an override, which moves the stage on; a second override is 409", async () => {
    const a = await app({ overridableTasks: true });
    const { stageId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    await finish(a, resultIds, ["failed", "passed"]);
    const waiting = await stageOf(a, stageId);
    expect(waiting.attributes.status).toBe("awaiting_override");
    expect(waiting.attributes.actions).toStrictEqual({ "is-overridable": true });
    expect(waiting.attributes.permissions["can-override-tasks"]).toBe(true);

    const overridden = await a.call("POST", `/api/v2/task-stages/${stageId}/actions/override`, {
      body: { comment: "accepted risk" },
      contentType: "application/vnd.api+json",
    });
    expect(overridden.status).toBe(200);
    expect(overridden.json.data.id).toBe(stageId);
    expect(overridden.json.data.attributes.status).toBe("passed");
    expect(overridden.json.data.attributes.actions).toStrictEqual({ "is-overridable": false });
    // D36: the override stamps its own time and leaves the stage's first running-at as it was.
    const stamps = overridden.json.data.attributes["status-timestamps"];
    expect(Object.keys(stamps).sort()).toStrictEqual(["awaiting-override-at", "overridden-at", "passed-at", "running-at"]);
    expect(stamps["running-at"]).toBe(waiting.attributes["status-timestamps"]["running-at"]);
    const order = ["running-at", "awaiting-override-at", "overridden-at", "passed-at"].map((k) => Date.parse(stamps[k]));
    expect(order).toStrictEqual([...order].sort((x, y) => x - y));
    const again = await a.call("POST", `/api/v2/task-stages/${stageId}/actions/override`);
    expect(again.status).toBe(409);
    expect(again.json.errors[0].detail).toBe("transition not allowed");
  });

  it("accepts the override with no body, an empty plain JSON object or a JSON:API body, and rejects a bad comment", async () => {
    for (const body of [undefined, {}, { data: { type: "task-stages", attributes: { comment: "ok" } } }]) {
      const a = await app({ overridableTasks: true });
      const { stageId, resultIds } = await startedRun(a, ["mandatory"]);
      await finish(a, resultIds, ["failed"]);
      const bad = await a.call("POST", `/api/v2/task-stages/${stageId}/actions/override`, { body: { comment: 42 } });
      expect(bad.status).toBe(422);
      expect(bad.json.errors[0].source).toStrictEqual({ pointer: "/comment" });
      const res = await a.call("POST", `/api/v2/task-stages/${stageId}/actions/override`, body === undefined ? {} : { body, contentType: "application/json" });
      expect(res.status).toBe(200);
      dispose();
    }
  });

  it("includes run, run.workspace and task results in either spelling; an unknown include is 400", async () => {
    const a = await app();
    const { runId, stageId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    for (const include of ["task_results,run.workspace", "task-results,run,run.workspace,policy_evaluations,policy-evaluations"]) {
      const res = await a.call("GET", `/api/v2/task-stages/${stageId}?include=${include}`);
      expect(res.status).toBe(200);
      const kinds = res.json.included.map((r: any) => `${r.type}:${r.id}`).sort();
      expect(kinds).toStrictEqual([`runs:${runId}`, ...resultIds.map((id) => `task-results:${id}`), "workspaces:ws-a"].sort());
      const included = res.json.included.find((r: any) => r.type === "task-results");
      expect(Object.keys(included.attributes).sort()).toStrictEqual(RESULT_ATTRIBUTES);
    }
    const bad = await a.call("GET", `/api/v2/task-stages/${stageId}?include=task_results,costs`);
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].detail).toContain("Invalid include parameter");
    expect((await a.call("GET", `/api/v2/task-stages/${stageId}`)).json.included).toBeUndefined();
  });

  it("cancels a run's unfinished stage and results; their callbacks then get 409", async () => {
    const a = await app();
    const { runId, stageId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    await finish(a, [resultIds[0]!], ["passed"]);
    const token = await tokenOf(a, resultIds[1]!);
    const stages = await a.runplane.runTasks.cancelRun(runId);
    expect(stages.map((s) => s.status)).toStrictEqual(["canceled"]);
    expect((await a.runplane.runTasks.getResult(resultIds[0]!))!.status).toBe("passed");
    expect((await a.runplane.runTasks.getResult(resultIds[1]!))!.status).toBe("canceled");
    expect((await stageOf(a, stageId)).attributes["status-timestamps"]).toHaveProperty("canceled-at");
    expect((await sendCallback(a, resultIds[1]!, token, callbackBody("passed"))).status).toBe(409);
  });

  it("answers 404 to unknown ids and to a principal without access, and 401 without a credential", async () => {
    const a = await app();
    const { runId, stageId, resultIds } = await startedRun(a, ["mandatory"]);
    for (const path of [`/api/v2/runs/${runId}/task-stages`, `/api/v2/task-stages/${stageId}`, `/api/v2/task-results/${resultIds[0]}`]) {
      expect((await a.call("GET", path, { token: a.otherOrgToken })).status).toBe(404);
      expect((await a.call("GET", path, { token: null })).status).toBe(401);
    }
    for (const path of ["/api/v2/runs/run-nope/task-stages", "/api/v2/task-stages/ts-nope", "/api/v2/task-results/taskrs-nope"]) {
      expect((await a.call("GET", path)).status).toBe(404);
    }
    expect((await a.call("POST", `/api/v2/task-stages/${stageId}/actions/override`, { token: a.otherOrgToken })).status).toBe(404);
  });

  it("fires stage-status and result-status events after the change is stored; a failing listener breaks nothing", async () => {
    const a = await app();
    const seen: string[] = [];
    // The stage listener reads the storage: the test waits for those reads, not for a while.
    const reads: Promise<void>[] = [];
    a.runplane.runTasks.on("stage-status", (e) => {
      const read = a.storage.taskStages.get(e.stageId).then((stored) => void seen.push(`stage ${e.from}->${e.to} stored=${stored?.status}`));
      reads.push(read);
      return read;
    });
    a.runplane.runTasks.on("result-status", (e) => {
      seen.push(`result ${e.from}->${e.to}`);
      throw new Error("listener bug");
    });
    a.runplane.runTasks.on("result-status", async () => {
      throw new Error("async listener bug");
    });
    const { resultIds } = await startedRun(a, ["mandatory"]);
    const token = await tokenOf(a, resultIds[0]!);
    expect((await sendCallback(a, resultIds[0]!, token, callbackBody("running"))).status).toBe(200);
    expect((await sendCallback(a, resultIds[0]!, token, callbackBody("passed"))).status).toBe(200);
    await Promise.all(reads);
    expect(seen).toStrictEqual([
      "stage pending->running stored=running",
      "result pending->running",
      "result running->passed",
      "stage running->passed stored=passed",
    ]);
  });

  it("lets the host check access tokens while they are valid", async () => {
    const a = await app();
    const { runId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    await deliverDue(a); // decision D16: the deadline runs from the first delivery attempt
    const [first, second] = [await tokenOf(a, resultIds[0]!), await tokenOf(a, resultIds[1]!)];
    expect(await a.runplane.runTasks.verifyAccessToken(first)).toStrictEqual({ taskResultId: resultIds[0], runId });
    expect(await a.runplane.runTasks.verifyAccessToken("not-a-token")).toBeNull();
    expect(await a.runplane.runTasks.verifyAccessToken("")).toBeNull();
    await finish(a, [resultIds[0]!], ["passed"]);
    expect(await a.runplane.runTasks.verifyAccessToken(first)).toBeNull();
    expect(await a.runplane.runTasks.verifyAccessToken(second)).not.toBeNull();
    a.clock.advance(10 * 60 * 1000);
    expect(await a.runplane.runTasks.verifyAccessToken(second)).toBeNull();
  });
});
