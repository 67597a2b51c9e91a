import { afterEach, describe, expect, it } from "vitest";
import type { Dialect, Logger, RunplaneOptions } from "../../src/index.js";
import { silentLogger } from "../../src/index.js";
import { runEventId } from "../../src/domain/run-events.js";
import { STORAGES } from "../helpers/storages.js";
import { attachTask, callbackBody, createTask, runTaskApp, sendCallback, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";

/** Decision D36: run events and policy checks read by id, events in time order. */

const CHECK = { id: "polchk-1", status: "passed", scope: "organization" as const, statusTimestamps: { "passed-at": "2026-01-01T00:00:01.250Z" } };

describe.each(STORAGES)("reading run events and policy checks by id ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = (options: Partial<RunplaneOptions> = {}): Promise<RunTaskApp> => runTaskApp(setup, (d) => (dispose = d), options);

  /** A run of ws-a (any id the host chose) with one mandatory post_plan task, its stage started. */
  async function started(a: RunTaskApp, id?: string) {
    await attachTask(a, await createTask(a, "scan"), "mandatory", ["post_plan"], "ws-a");
    const { run, stages } = await a.runplane.runTasks.createRun({ id, workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go", createdBy: "user-owner" });
    await a.runplane.runTasks.startStage(run.id, "post_plan");
    const [result] = await a.runplane.runTasks.listResults(stages[0]!.id);
    return { run, stageId: stages[0]!.id, resultId: result!.id, token: await tokenOf(a, result!.id) };
  }

  /** The run failed its task, was overridden, then commented on: the whole story in one second. */
  async function overriddenAndCommented(a: RunTaskApp, id?: string) {
    const s = await started(a, id);
    await sendCallback(a, s.resultId, s.token, callbackBody("failed", { message: "2 findings" }));
    await a.call("POST", `/api/v2/task-stages/${s.stageId}/actions/override`, { body: { comment: "accepted" }, contentType: "application/json" });
    const comment = await a.call("POST", `/api/v2/runs/${encodeURIComponent(s.run.id)}/comments`, { body: { data: { type: "comments", attributes: { body: "seen" } } } });
    return { ...s, commentId: comment.json.data.id as string, commentEvent: comment.json.data.relationships["run-event"].data.id as string };
  }

  it("lists the events of one second in millisecond order: awaiting_override, then the override, then passed", async () => {
    const a = await app({ overridableTasks: true });
    const { run } = await overriddenAndCommented(a);
    const events = (await a.call("GET", `/api/v2/runs/${run.id}/run-events`)).json.data;
    expect(events.map((e: any) => e.attributes.action)).toStrictEqual(["created", "task_stage_running", "task_result_failed", "task_stage_awaiting_override", "overridden", "task_stage_passed", "commented"]);
    const times = events.map((e: any) => e.attributes["created-at"] as string);
    for (const t of times) expect(t).toMatch(/^2026-01-01T00:00:00\.\d{3}Z$/);
    expect(times).toStrictEqual([...times].sort());
    expect(new Set(times).size).toBe(times.length);
  });

  it("reads every listed event by its id, for any run id the host chose, with the same document and includes", async () => {
    const a = await app({ overridableTasks: true });
    const runId = "host run/ü?#1";
    const { commentId, commentEvent } = await overriddenAndCommented(a, runId);
    const list = (await a.call("GET", `/api/v2/runs/${encodeURIComponent(runId)}/run-events`)).json.data;
    expect(list.map((e: any) => e.id)).toContain(commentEvent);
    for (const event of list) {
      expect(event.id).toMatch(/^re-[A-Za-z0-9._-]+$/);
      const one = await a.call("GET", `/api/v2/run-events/${event.id}`);
      expect(one.status).toBe(200);
      expect(one.json).toStrictEqual({ data: event });
    }
    const withIncludes = await a.call("GET", `/api/v2/run-events/${commentEvent}?include=actor,comment`);
    expect(withIncludes.json.included).toStrictEqual([
      { type: "users", id: "user-owner", attributes: { username: "owner" } },
      (await a.call("GET", `/api/v2/comments/${commentId}`)).json.data,
    ]);
    const created = await a.call("GET", `/api/v2/run-events/${runEventId(runId, "created")}?include=actor,comment`);
    // decision D49: the run's creation is its creator's doing: the actor is the run's creator.
    expect(created.json.data.relationships.actor.data).toStrictEqual({ type: "users", id: "user-owner" });
    expect(created.json.included).toStrictEqual([{ type: "users", id: "user-owner", attributes: { username: "owner" } }]);
    expect((await a.call("GET", `/api/v2/run-events/${commentEvent}?include=target`)).status).toBe(400);
  });

  it("answers 404 for an id that names no event of a readable run, 401 without a credential", async () => {
    const a = await app();
    const { run } = await started(a);
    const mine = runEventId(run.id, "created");
    expect((await a.call("GET", `/api/v2/run-events/${mine}`, { token: null })).status).toBe(401);
    expect((await a.call("GET", `/api/v2/run-events/${mine}`, { token: a.devToken })).status).toBe(404);
    expect((await a.call("GET", `/api/v2/run-events/${mine}`, { token: a.otherOrgToken })).status).toBe(404);
    const notFound = [
      runEventId("run-nope", "created"),
      runEventId(run.id, "comment wsc-nope"),
      `${mine.slice(0, -1)}${mine.endsWith("A") ? "B" : "A"}`,
      "re-0123456789ABCDEF",
      "re-%FF.0123456789ABCDEF",
      "x".repeat(5000),
    ];
    for (const id of notFound) {
      const res = await a.call("GET", `/api/v2/run-events/${id}`);
      expect(res.status, id).toBe(404);
      expect(res.json.errors[0].status).toBe("404");
    }
  });

  it("reads a policy check by id through the host's policyCheckRun, as the list writes it, in both dialects", async () => {
    for (const dialect of ["default", "hcp-terraform"] as Dialect[]) {
      const a = await app({ dialect, runs: { policyChecks: () => [CHECK, { id: "polchk-2", status: "soft_failed" }], policyCheckRun: (id) => (id.startsWith("polchk-") ? runOf : null) } });
      const { run } = await started(a);
      const runOf = run.id;
      const list = (await a.call("GET", `/api/v2/runs/${run.id}/policy-checks`)).json.data;
      for (const check of list) {
        const one = await a.call("GET", `/api/v2/policy-checks/${check.id}`);
        expect(one.status).toBe(200);
        expect(one.json).toStrictEqual({ data: check });
      }
      expect(list[0].attributes["status-timestamps"]).toStrictEqual({ "passed-at": "2026-01-01T00:00:01.250+00:00" });
      const included = (await a.call("GET", `/api/v2/policy-checks/polchk-1?include=run,run.workspace`)).json.included;
      expect(included.map((r: any) => [r.type, r.id])).toStrictEqual([["runs", run.id], ["workspaces", "ws-a"]]);
      expect((await a.call("GET", `/api/v2/policy-checks/polchk-1?include=run`)).json.included[0]).toStrictEqual((await a.call("GET", `/api/v2/runs/${run.id}`)).json.data);
      // The host names a run that does not list the check, or a check it does not know.
      expect((await a.call("GET", "/api/v2/policy-checks/polchk-3")).status).toBe(404);
      expect((await a.call("GET", "/api/v2/policy-checks/other-1")).status).toBe(404);
      expect((await a.call("GET", "/api/v2/policy-checks/polchk-1", { token: a.devToken })).status).toBe(404);
      expect((await a.call("GET", "/api/v2/policy-checks/polchk-1", { token: null })).status).toBe(401);
      dispose();
    }
  });

  it("answers 404 without runs.policyCheckRun, and ignores (logging where) a host answer that is not a run id", async () => {
    const plain = await app({ runs: { policyChecks: () => [CHECK] } });
    await started(plain);
    expect((await plain.call("GET", "/api/v2/policy-checks/polchk-1")).status).toBe(404);
    dispose();

    const warnings: unknown[][] = [];
    const logger: Logger = { ...silentLogger, warn: (...args: unknown[]) => void warnings.push(args) };
    const asked: string[] = [];
    const odd = await app({ logger, runs: { policyChecks: () => [CHECK], policyCheckRun: (id) => (asked.push(id), 42 as never) } });
    await started(odd);
    expect((await odd.call("GET", "/api/v2/policy-checks/polchk-1")).status).toBe(404);
    expect(warnings.map(([message]) => message)).toStrictEqual(["option runs.policyCheckRun returned a value runplane cannot use; ignored"]);
    // An id longer than any host id is not asked of the host.
    expect((await odd.call("GET", `/api/v2/policy-checks/${"p".repeat(201)}`)).status).toBe(404);
    expect(asked).toStrictEqual(["polchk-1"]);
  });
});
