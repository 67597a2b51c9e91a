import { afterEach, describe, expect, it, vi } from "vitest";
import { deliveriesTo, tasksAnswer } from "../delivery/support.js";
import { callbackBody, sendCallback } from "../helpers/run-tasks.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { createResultsPage } from "../../src/index.js";
import { agentApp, answered200, protocol, registerRaw, startPoolRun, type AgentApp } from "./support.js";

// Found by an operator (issue 43): an agent killed after sending a request left no trace: the job
// was sent again by another agent, the integration received it twice, and the attempts API showed
// one attempt; when the callback came in time, a passed result had 0 attempts.
// decision D45: a job handed to an agent is an attempt; a lease that runs out without a report
// closes it as "no report from agent NAME" before the next attempt. decision D58: the attempt is a
// record from the moment the agent takes the job (`under-way`), which its end completes in place.

let receiver: LoopbackServer | undefined;
let a: AgentApp | undefined;
afterEach(async () => {
  await a?.close();
  await receiver?.close();
  a = undefined;
  receiver = undefined;
});

const NO_REPORT = "no report from agent doomed: the integration may have received the request";
const UNDER_WAY = "handed to agent doomed; no report yet";
const attemptsOf = async (resultId: string) =>
  (await a!.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 })).items.map((x) => ({ number: x.number, outcome: x.outcome, status: x.status, detail: x.detail, agentId: x.agentId }));

/** A pool run whose job is taken by a hand-driven agent named "doomed" that never reports; resolves the job. */
async function jobTakenAndLost(app: AgentApp, url: string, agents = { timeoutMs: 400, marginMs: 200 }) {
  const helper = app.agent();
  await helper.agentId;
  const run = await startPoolRun(app, url);
  await helper.stop();
  const doomed = await registerRaw(app, app.agentToken, "doomed");
  app.dispatcher({ agents }).start();
  const taken = await protocol(app, "jobs/next", { "agent-id": doomed, "wait-ms": 5_000 }, app.agentToken);
  expect(taken.status).toBe(200);
  return { ...run, doomed, job: taken.json as { id: string; body: string } };
}

describe("a job an agent takes (decision D58)", () => {
  it("is an attempt under way from the moment it is handed, naming the agent on the API and the page; the agent's report completes that record", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    const { runId, resultId, doomed, job } = await jobTakenAndLost(a, receiver.url("/hook"), { timeoutMs: 10_000, marginMs: 3_000 });
    // Written before the agent got the job: there as soon as the poll answered.
    const api = await a.call("GET", `/api/v2/task-results/${resultId}/delivery-attempts`);
    expect(api.json.data).toHaveLength(1);
    const handedId = api.json.data[0].id as string;
    expect(api.json.data[0].attributes).toMatchObject({ attempt: 1, outcome: "under-way", status: null, "error-code": null, detail: UNDER_WAY, "agent-id": doomed, "agent-name": "doomed" });
    const page = createResultsPage(a.runplane, { prefix: "/app" });
    const html = await (await page(new Request(`http://localhost/app/runs/${runId}`, { headers: { authorization: `Bearer ${a.ownerToken}` } }))).text();
    expect(html).toContain("Under way: attempt 1 was handed to agent doomed at ");
    expect(html).toContain(`under way: no report yet <span class="muted">through agent <span class="mono" title="${doomed}">doomed</span></span>`);

    expect((await protocol(a, `jobs/${job.id}/result`, answered200(doomed), a.agentToken)).status).toBe(204);
    await vi.waitFor(async () => expect((await a!.storage.taskResults.get(resultId))?.status).toBe("running"), { timeout: 5_000, interval: 25 });
    const done = await a.call("GET", `/api/v2/task-results/${resultId}/delivery-attempts`);
    expect(done.json.data.map((d: { id: string; attributes: Record<string, unknown> }) => [d.id, d.attributes.attempt, d.attributes.outcome, d.attributes.status, d.attributes["agent-name"]])).toStrictEqual([
      [handedId, 1, "answered", 200, "doomed"],
    ]);
  });
});

describe("a job whose agent never reports", () => {
  it("is an attempt closed as 'no report from agent NAME' when its lease runs out, before the next attempt delivers it", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    const { resultId, doomed, runId } = await jobTakenAndLost(a, receiver.url("/hook"));
    await vi.waitFor(async () => expect((await attemptsOf(resultId))[0]?.outcome).toBe("failed"), { timeout: 5_000, interval: 25 });
    expect(await attemptsOf(resultId)).toStrictEqual([{ number: 1, outcome: "failed", status: null, detail: NO_REPORT, agentId: doomed }]);
    expect((await a.storage.taskResults.get(resultId))?.status).toBe("pending");
    // Found from outside: the run page then said "Failing integration" of an integration that
    // answered nothing: the agent failed, not it.
    const page = createResultsPage(a.runplane, { prefix: "/app" });
    const html = await (await page(new Request(`http://localhost/app/runs/${runId}`, { headers: { authorization: `Bearer ${a.ownerToken}` } }))).text();
    expect(html).not.toContain("Failing integration");
    expect(html).toMatch(/Waiting on agents: \S+ retrying \(its agent did not report\)\./);

    const survivor = a.agent({ name: "survivor" });
    const survivorId = await survivor.agentId;
    await vi.waitFor(async () => expect((await a!.storage.taskResults.get(resultId))?.status).toBe("running"), { timeout: 10_000, interval: 25 });
    expect(deliveriesTo(receiver.requests)).toHaveLength(1);
    expect((await attemptsOf(resultId)).map((x) => [x.number, x.outcome, x.status, x.agentId])).toStrictEqual([
      [2, "answered", 200, survivorId],
      [1, "failed", null, doomed],
    ]);
  });

  it("still shows the attempt that carried the request when the integration's callback passed the result in time", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    const { resultId, doomed, job } = await jobTakenAndLost(a, receiver.url("/hook"), { timeoutMs: 1_500, marginMs: 300 });
    // The integration got the request (through the agent) and calls back; the agent never reports.
    const token = (JSON.parse(Buffer.from(job.body, "base64").toString("utf8")) as { access_token: string }).access_token;
    expect((await sendCallback(a, resultId, token, callbackBody("passed"))).status).toBe(200);
    // decision D58: the passed result shows the attempt that carried it at once, under way ...
    expect(await attemptsOf(resultId)).toStrictEqual([{ number: 1, outcome: "under-way", status: null, detail: UNDER_WAY, agentId: doomed }]);
    // ... and closed as no report once the job's time is up.
    await vi.waitFor(async () => expect((await attemptsOf(resultId))[0]?.outcome).toBe("failed"), { timeout: 5_000, interval: 25 });
    expect((await a.storage.taskResults.get(resultId))?.status).toBe("passed");
    expect(await attemptsOf(resultId)).toStrictEqual([{ number: 1, outcome: "failed", status: null, detail: NO_REPORT, agentId: doomed }]);
  });
});
