import { afterEach, describe, expect, it } from "vitest";
import { firstPassOver } from "../helpers/dispatcher-passes.js";
import { loopbacksClosedAfterEach, type LoopbackServer, type Script } from "../helpers/loopback-server.js";
import { callbackBody, sendCallback } from "../helpers/run-tasks.js";
import { bodyOf, deliveriesTo, deliveryApp, MINUTE, resultOf, startRun, tasksAnswer, type DeliveryApp } from "../delivery/support.js";

// Decision D31 over HTTP: a result's attempts are read like the result (runs >= read, D21; 404
// otherwise, D4), listed newest first and included in the result only when asked for; "retry now"
// makes the next attempt of a retrying result at once, within D16's deadline, or says why not (409).

let a: DeliveryApp;
const loopback = loopbacksClosedAfterEach();
afterEach(() => a.close());

/** A result whose first attempt was answered 503: its next attempt waits for its backoff. */
async function retrying(options: Parameters<typeof deliveryApp>[0] = {}) {
  a = await deliveryApp(options);
  const server = await loopback(tasksAnswer((_req, i) => (i <= 1 ? { kind: "respond", status: 503, body: "maintenance" } : { kind: "respond", status: 200 })));
  const { resultIds } = await startRun(a, [server.url("/hook")]);
  expect((await a.dispatcher().tick()).failed).toBe(1);
  return { server, resultId: resultIds[0]! };
}

const attemptsPath = (id: string) => `/api/v2/task-results/${id}/delivery-attempts`;
const retryPath = (id: string) => `/api/v2/task-results/${id}/actions/retry`;

describe("GET /task-results/:id/delivery-attempts (D31)", () => {
  it("lists a result's attempts newest first, paged, with the answer's excerpt", async () => {
    const { resultId } = await retrying();
    a.clock.advance(MINUTE);
    await a.dispatcher().tick();
    const res = await a.call("GET", attemptsPath(resultId));
    expect(res.status).toBe(200);
    expect(res.json.data.map((d: any) => [d.type, d.attributes.attempt, d.attributes.status, d.attributes.outcome])).toStrictEqual([
      ["delivery-attempts", 2, 200, "answered"],
      ["delivery-attempts", 1, 503, "answered"],
    ]);
    expect(res.json.data[1].attributes).toMatchObject({ detail: "responded with 503", "response-excerpt": "maintenance", "response-excerpt-truncated": false, "error-code": null });
    expect(res.json.data[1].relationships["task-result"].data).toStrictEqual({ type: "task-results", id: resultId });
    expect(res.json.meta.pagination["total-count"]).toBe(2);
    const second = await a.call("GET", `${attemptsPath(resultId)}?page%5Bsize%5D=1&page%5Bnumber%5D=2`);
    expect(second.json.data.map((d: any) => d.attributes.attempt)).toStrictEqual([1]);
    expect((await a.call("GET", `${attemptsPath(resultId)}?page%5Bsize%5D=0`)).status).toBe(422);
  });

  it("includes the attempts in the result only with include=delivery-attempts, in either dialect", async () => {
    for (const dialect of ["default", "hcp-terraform"] as const) {
      const { resultId } = await retrying({ dialect });
      const plain = await a.call("GET", `/api/v2/task-results/${resultId}`);
      // Nothing HCP Terraform does not send unless asked (D1).
      expect(Object.keys(plain.json.data.relationships).sort()).toStrictEqual(["task-result-outcomes", "task-stage"]);
      expect(plain.json.included).toBeUndefined();
      for (const include of ["delivery-attempts", "delivery_attempts"]) {
        const res = await a.call("GET", `/api/v2/task-results/${resultId}?include=${include}`);
        expect(res.status).toBe(200);
        const ids = res.json.included.map((r: any) => r.id);
        expect(res.json.data.relationships["delivery-attempts"].data).toStrictEqual(ids.map((id: string) => ({ type: "delivery-attempts", id })));
        expect(res.json.data.relationships["delivery-attempts"].links.related).toBe(attemptsPath(resultId));
        expect(res.json.included.map((r: any) => r.attributes.status)).toStrictEqual([503]);
      }
      expect((await a.call("GET", `/api/v2/task-results/${resultId}?include=outcomes`)).status).toBe(400);
      await a.close();
    }
    a = await deliveryApp();
  });

  it("answers 404 to whoever may not read the result, like the result itself, and 401 without a credential", async () => {
    const { resultId } = await retrying();
    // team-devs has no grant on the project: it reads no runs.
    for (const path of [attemptsPath(resultId), `/api/v2/task-results/${resultId}`]) {
      expect((await a.call("GET", path, { token: a.devToken })).status).toBe(404);
      expect((await a.call("GET", path, { token: a.otherOrgToken })).status).toBe(404);
      expect((await a.call("GET", path, { token: null })).status).toBe(401);
    }
    expect((await a.call("GET", attemptsPath("taskrs-0000000000000000"))).status).toBe(404);
    await a.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" });
    expect((await a.call("GET", attemptsPath(resultId), { token: a.devToken })).status).toBe(200);
  });

  // Found from outside (decision D63): a token that only reads runs read every integration's answers.
  it("shows what the integration answered only to who manages the workspace's run tasks", async () => {
    const { resultId } = await retrying();
    await a.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" });
    const excerpts = async (token: string) => {
      const listed = await a.call("GET", attemptsPath(resultId), { token });
      const included = await a.call("GET", `/api/v2/task-results/${resultId}?include=delivery-attempts`, { token });
      return [...listed.json.data, ...included.json.included].map((d: any) => [d.attributes["response-excerpt"], d.attributes.status]);
    };
    expect(await excerpts(a.devToken)).toStrictEqual([[null, 503], [null, 503]]);
    expect(await excerpts(a.ownerToken)).toStrictEqual([["maintenance", 503], ["maintenance", 503]]);
    await a.runplane.teamProjects.update((await a.runplane.teamProjects.list("prj-a", { teamId: "team-devs" })).items[0]!.id, { access: "maintain" });
    expect(await excerpts(a.devToken)).toStrictEqual([["maintenance", 503], ["maintenance", 503]]);
  });
});

describe("POST /task-results/:id/actions/retry (D31)", () => {
  it("makes the next attempt of a retrying result at once", async () => {
    const { server, resultId } = await retrying();
    const dispatcher = a.dispatcher();
    // Not due yet: a pass sends nothing.
    expect((await dispatcher.tick()).attempted).toBe(0);
    const res = await a.call("POST", retryPath(resultId));
    expect(res.status).toBe(202);
    expect(res.text).toBe("");
    expect((await dispatcher.tick()).delivered).toBe(1);
    expect(deliveriesTo(server.requests)).toHaveLength(2);
    expect((await resultOf(a, resultId)).status).toBe("running");
    expect((await a.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 })).items.map((x) => x.status)).toStrictEqual([200, 503]);
  });

  it("wakes a running dispatcher, which sends the attempt without waiting for its poll", async () => {
    const { server, resultId } = await retrying();
    // After its first pass the dispatcher polls again in an hour, long after this test's timeout,
    // and the manual clock never makes the retry due: only the wake-up can send it.
    const dispatcher = a.dispatcher({ pollIntervalMs: 3_600_000 });
    const firstPass = firstPassOver(a.runplane.runTasks.deliveries);
    dispatcher.start();
    let stopped = false;
    try {
      await firstPass;
      const arrived = new Promise<void>((resolve) => server.setScript(tasksAnswer(() => (resolve(), { kind: "respond", status: 200 }))));
      expect((await a.call("POST", retryPath(resultId))).status).toBe(202);
      await arrived;
      // stop() lets the attempt finish and writes its record.
      await dispatcher.stop();
      stopped = true;
      expect((await resultOf(a, resultId)).status).toBe("running");
      expect(deliveriesTo(server.requests).map((r) => bodyOf(r).task_result_id)).toStrictEqual([resultId, resultId]);
    } finally {
      if (!stopped) await dispatcher.stop({ graceMs: 0 });
    }
  });

  it("needs the workspace's run-tasks permission and read access to its runs; 404 otherwise", async () => {
    const { resultId } = await retrying();
    const d = a.runplane.directory;
    // Organization-wide manage-run-tasks but no grant on the project: no runs to read.
    await d.teams.update("team-devs", { orgPermissions: ["manage-run-tasks"] });
    expect((await a.call("POST", retryPath(resultId), { token: a.devToken })).status).toBe(404);
    expect((await a.call("GET", attemptsPath(resultId), { token: a.devToken })).status).toBe(404);
    // Runs read without run-tasks: reads the attempts, may not resend.
    await d.teams.update("team-devs", { orgPermissions: [] });
    await a.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" });
    expect((await a.call("GET", attemptsPath(resultId), { token: a.devToken })).status).toBe(200);
    expect((await a.call("POST", retryPath(resultId), { token: a.devToken })).status).toBe(404);
    expect((await a.call("POST", retryPath(resultId), { token: a.otherOrgToken })).status).toBe(404);
    expect((await a.call("POST", retryPath(resultId), { token: null })).status).toBe(401);
    await a.runplane.teamProjects.update((await a.runplane.teamProjects.list("prj-a", { teamId: "team-devs" })).items[0]!.id, { access: "maintain" });
    expect((await a.call("POST", retryPath(resultId), { token: a.devToken })).status).toBe(202);
  });

  const conflict = async (id: string, detail: RegExp) => {
    const res = await a.call("POST", retryPath(id));
    expect(res.status, res.text).toBe(409);
    expect(res.json.errors[0].detail).toMatch(detail);
  };

  it("answers 409 for a result not being retried: never sent, accepted by the integration, or final", async () => {
    a = await deliveryApp();
    const server = await loopback(tasksAnswer({ kind: "respond", status: 200 }));
    const { resultIds } = await startRun(a, [server.url("/hook")]);
    const id = resultIds[0]!;
    await conflict(id, /has not been sent yet/);
    await a.dispatcher().tick();
    await conflict(id, /integration accepted its request/);
    const token = bodyOf(deliveriesTo(server.requests)[0]!).access_token as string;
    expect((await sendCallback(a, id, token, callbackBody("passed"))).status).toBe(200);
    await conflict(id, /already reached a final status/);
    expect((await a.call("POST", retryPath("taskrs-0000000000000000"))).status).toBe(404);
  });

  it("answers 409 past the deadline (D16) and while an attempt is under way, and changes nothing", async () => {
    const { resultId } = await retrying();
    const row = async () => (await a.storage.taskDeliveries.listByResult(resultId))[0]!;
    a.clock.advance(10 * MINUTE);
    const before = await row();
    await conflict(resultId, /past its deadline/);
    expect(await row()).toStrictEqual(before);
    await a.close();

    // A claim holds the row: its attempt is being made (or about to be).
    const next = await retrying();
    a.clock.advance(MINUTE);
    const [claimed] = await a.runplane.runTasks.deliveries.claim({ owner: "elsewhere", leaseMs: 30_000, limit: 10 });
    expect(claimed!.row.taskResultId).toBe(next.resultId);
    await conflict(next.resultId, /under way/);
  });
});
