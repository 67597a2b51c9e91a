import { afterEach, describe, expect, it, vi } from "vitest";
import { createResultsPage } from "../../src/index.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { bodyOf, deliveriesTo, isVerification, tasksAnswer } from "../delivery/support.js";
import { agentApp, POOL, poolTaskBody, startPoolRun, type AgentApp } from "./support.js";

// Decision D34 end to end over real HTTP on loopback: the integration listens on 127.0.0.1, which
// the platform's own egress refuses; an agent of the task's pool, run by `runAgent` in this process
// with its own egress, carries the verification request and the stage's request.

let receiver: LoopbackServer | undefined;
let a: AgentApp | undefined;
afterEach(async () => {
  await a?.close();
  await receiver?.close();
  a = undefined;
  receiver = undefined;
});

describe.each(["default", "hcp-terraform"] as const)("a private integration through an agent (%s dialect)", (dialect) => {
  const signature = dialect === "hcp-terraform" ? "x-tfc-task-signature" : "x-svc-task-signature";

  it("is refused by the platform's own egress, and saved only while an agent of the pool is connected", async () => {
    receiver = await startLoopbackServer({ kind: "respond", status: 200 });
    a = await agentApp({ dialect });
    const direct = await a.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("direct", receiver.url("/hook"), null) });
    expect(direct.status).toBe(422);
    expect(direct.json.errors[0].detail).toMatch(/not allowed/);
    const none = await a.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("scan", receiver.url("/hook")) });
    expect(none.status).toBe(422);
    expect(none.json.errors[0]).toMatchObject({ detail: `no agent of pool inside (${POOL}) is connected`, source: { pointer: "/data/relationships/agent-pool" } });
    expect(receiver.requests).toHaveLength(0);

    const agent = a.agent();
    await agent.agentId;
    const saved = await a.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("scan", receiver.url("/hook")) });
    expect(saved.status).toBe(201);
    expect(saved.json.data.relationships["agent-pool"].data).toStrictEqual({ type: "agent-pools", id: POOL });
    expect(receiver.requests).toHaveLength(1);
    expect(isVerification(receiver.requests[0]!)).toBe(true);
    expect(receiver.requests[0]!.headers[signature]).toMatch(/^[0-9a-f]{128}$/);
  });

  it("passes the stage through the agent: one attempt, the answer recorded, the agent shown as idle", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200, body: "queued" }));
    a = await agentApp({ dialect });
    const agent = a.agent();
    const agentId = await agent.agentId;
    const { resultId } = await startPoolRun(a, receiver.url("/hook"));
    a.dispatcher().start();
    await vi.waitFor(async () => expect((await a!.storage.taskResults.get(resultId))?.status).toBe("running"), { timeout: 10_000, interval: 50 });

    const sent = deliveriesTo(receiver.requests);
    expect(sent).toHaveLength(1);
    expect(bodyOf(sent[0]!)).toMatchObject({ task_result_id: resultId, stage: "post_plan" });
    expect(sent[0]!.headers[signature]).toMatch(/^[0-9a-f]{128}$/);
    const result = await a.call("GET", `/api/v2/task-results/${resultId}`);
    expect(result.json.data.attributes["agent-pool-id"]).toBe(POOL);
    const attempts = await a.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 });
    expect(attempts.items).toHaveLength(1);
    expect(attempts.items[0]).toMatchObject({ outcome: "answered", status: 200, agentId });
    const shown = await a.call("GET", `/api/v2/agents/${agentId}`);
    expect(shown.json.data.attributes).toMatchObject({ name: "test-agent", status: expect.stringMatching(/^(idle|busy)$/) });
  });
});

describe("which agent delivered an attempt", () => {
  it("is shown on the attempts over HTTP and on the results page", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 500, body: "scanner is busy" }));
    a = await agentApp();
    const agentId = await a.agent().agentId;
    const { runId, resultId } = await startPoolRun(a, receiver.url("/hook"));
    a.dispatcher().start();
    await vi.waitFor(async () => expect((await a!.storage.taskDeliveries.listByResult(resultId))[0]?.attempt).toBe(1), { timeout: 10_000, interval: 25 });

    const res = await a.call("GET", `/api/v2/task-results/${resultId}/delivery-attempts`);
    expect(res.json.data[0].attributes).toMatchObject({ status: 500, detail: expect.stringMatching(/^responded with 500/), "agent-id": agentId });
    const page = createResultsPage(a.runplane, { prefix: "/app" });
    const html = await (await page(new Request(`http://localhost/app/runs/${runId}`, { headers: { authorization: `Bearer ${a.ownerToken}` } }))).text();
    // decision D34: by its --name, the id on hover.
    expect(html).toContain(`through agent <span class="mono" title="${agentId}">test-agent</span>`);
  });
});

// Found by an operator (issue 43): a passed run through an agent looked identical to a direct one,
// and an answer the agent did not keep read "reached through the egress allowlist", which reads as
// the server's EGRESS_ALLOW. decision D34: every pool result names its pool and agent.
describe("a pool result, passed too", () => {
  it("names its pool and its agent (by --name on the page, by id and name in the API); the agent's egress is what kept no body", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200, body: "queued" }));
    a = await agentApp();
    const agentId = await a.agent({ name: "scanner-net-1" }).agentId;
    const { runId, resultId } = await startPoolRun(a, receiver.url("/hook"));
    a.dispatcher().start();
    await vi.waitFor(async () => expect((await a!.storage.taskResults.get(resultId))?.status).toBe("running"), { timeout: 10_000, interval: 25 });
    const { access_token: token } = bodyOf(deliveriesTo(receiver.requests)[0]!) as { access_token: string };
    expect((await a.call("PATCH", `/api/v2/task-results/${resultId}/callback`, { token, body: { data: { type: "task-results", attributes: { status: "passed" } } } })).status).toBe(200);

    const res = await a.call("GET", `/api/v2/task-results/${resultId}`);
    expect(res.json.data.attributes).toMatchObject({ status: "passed", "agent-pool-id": POOL, "agent-pool-name": "inside", "agent-id": agentId, "agent-name": "scanner-net-1", "waiting-for-agent": null });
    const page = createResultsPage(a.runplane, { prefix: "/app" });
    const html = await (await page(new Request(`http://localhost/app/runs/${runId}`, { headers: { authorization: `Bearer ${a.ownerToken}` } }))).text();
    expect(html).toContain(`Through agent pool <span title="${POOL}">inside</span>, agent <span class="mono" title="${agentId}">scanner-net-1</span>.`);
    const attempts = await a.call("GET", `/api/v2/task-results/${resultId}/delivery-attempts`);
    expect(attempts.json.data[0].attributes["response-excerpt"]).toBe("HTTP 200 OK (body not kept by the agent's own egress: it keeps only the status line of an answer from a private address)");
  });
});
