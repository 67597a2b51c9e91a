import { afterEach, describe, expect, it, vi } from "vitest";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { deliveriesTo, tasksAnswer } from "../delivery/support.js";
import { attachTask } from "../helpers/run-tasks.js";
import { agentApp, answered200, POOL, poolTaskBody, protocol, registerRaw, startPoolRun, type AgentApp } from "./support.js";

// Decision D34, leases and faults over the real protocol: a job no agent reports in time goes back
// as an attempt closed "no report from agent NAME" (decision D45), a late report changes nothing, a revoked token ends its sessions
// and gives back what they hold, and of agents racing for one job exactly one gets it.

let receiver: LoopbackServer | undefined;
let a: AgentApp | undefined;
afterEach(async () => {
  await a?.close();
  await receiver?.close();
  a = undefined;
  receiver = undefined;
});

const rowOf = async (resultId: string) => (await a!.storage.taskDeliveries.listByResult(resultId))[0]!;
/** decision D45: the job's row is back, its lost job counted as attempt 1, due again at once. */
const released = async (resultId: string) => expect(await rowOf(resultId)).toMatchObject({ leaseOwner: null, attempt: 1, closedAt: null });
const NO_REPORT = "no report from agent raw: the integration may have received the request";

/** A host with an agent registered by hand, holding its first job; the report is the test's. */
async function heldJob(agents: { timeoutMs: number; marginMs: number }, leaseMs?: number) {
  receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
  a = await agentApp();
  const agentId = await registerRaw(a);
  const { resultId } = await startPoolRunVerified(a, agentId);
  a.dispatcher({ agents, ...(leaseMs ? { leaseMs } : {}) }).start();
  const poll = await protocol(a, "jobs/next", { "agent-id": agentId, "wait-ms": 5_000 }, a.agentToken);
  expect(poll.status).toBe(200);
  return { agentId, resultId, job: poll.json };
}

/** Saving a pool task needs an agent to answer its verification: this one answers it by hand. */
async function startPoolRunVerified(app: AgentApp, agentId: string) {
  const started = startPoolRun(app, receiver!.url("/hook"));
  const verification = await protocol(app, "jobs/next", { "agent-id": agentId, "wait-ms": 5_000 }, app.agentToken);
  await protocol(app, `jobs/${verification.json.id}/result`, answered200(agentId), app.agentToken);
  return started;
}

describe("agent leases", () => {
  it("gives back a job not reported in time (an attempt closed as no report), refuses its late report, and hands it out again", async () => {
    const { agentId, resultId, job } = await heldJob({ timeoutMs: 300, marginMs: 200 });
    expect(job).toMatchObject({ "timeout-ms": 300 });
    expect(Buffer.from(job.body, "base64").toString()).toContain(resultId);
    await vi.waitFor(() => released(resultId), { timeout: 5_000, interval: 25 });
    const late = await protocol(a!, `jobs/${job.id}/result`, answered200(agentId), a!.agentToken);
    expect(late.status).toBe(409);
    await released(resultId);
    expect((await a!.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 })).items.map((x) => [x.number, x.detail])).toStrictEqual([[1, NO_REPORT]]);

    const again = await protocol(a!, "jobs/next", { "agent-id": agentId, "wait-ms": 5_000 }, a!.agentToken);
    expect(again.json.id).not.toBe(job.id);
    expect((await protocol(a!, `jobs/${again.json.id}/result`, answered200(agentId), a!.agentToken)).status).toBe(204);
    await vi.waitFor(async () => expect((await a!.storage.taskResults.get(resultId))?.status).toBe("running"), { timeout: 5_000, interval: 25 });
    const attempts = await a!.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 });
    expect(attempts.items.map((x) => [x.number, x.status])).toStrictEqual([[2, 200], [1, null]]);
  });

  it("keeps a job's time within the row's lease (a short lease shortens the job)", async () => {
    const { resultId, job } = await heldJob({ timeoutMs: 60_000, marginMs: 5_000 }, 4_000);
    const row = await rowOf(resultId);
    expect(job["timeout-ms"]).toBeLessThanOrEqual(2_000);
    expect(Date.parse(job["lease-deadline"])).toBeLessThan(Date.parse(row.leaseExpiresAt!));
  });

  it("records an error the agent reports as a failed attempt, retried like a direct one", async () => {
    const { agentId, resultId, job } = await heldJob({ timeoutMs: 5_000, marginMs: 1_000 });
    const failed = { "agent-id": agentId, "duration-ms": 3, error: { code: "network", reason: "ECONNREFUSED" } };
    expect((await protocol(a!, `jobs/${job.id}/result`, failed, a!.agentToken)).status).toBe(204);
    await vi.waitFor(async () => expect((await rowOf(resultId)).attempt).toBe(1), { timeout: 5_000, interval: 25 });
    expect(await rowOf(resultId)).toMatchObject({ lastError: "the connection failed (ECONNREFUSED)", closedAt: null });
  });

  it("refuses a report naming another agent's job, and bad input, changing nothing", async () => {
    const { resultId, job } = await heldJob({ timeoutMs: 5_000, marginMs: 1_000 });
    const other = await registerRaw(a!, a!.agentToken, "other");
    expect((await protocol(a!, `jobs/${job.id}/result`, answered200(other), a!.agentToken)).status).toBe(409);
    const bad = await protocol(a!, `jobs/${job.id}/result`, { "agent-id": other, "duration-ms": -1 }, a!.agentToken);
    expect(bad.status).toBe(422);
    expect(bad.json.errors[0].status).toBe("422");
    expect((await rowOf(resultId)).attempt).toBe(0);
  });
});

describe("agent token revocation", () => {
  it("answers a waiting poll 401 at once and gives back the job the agent holds", async () => {
    const { agentId, resultId, job } = await heldJob({ timeoutMs: 60_000, marginMs: 1_000 });
    const waiting = protocol(a!, "jobs/next", { "agent-id": agentId, "wait-ms": 20_000 }, a!.agentToken);
    await vi.waitFor(() => expect(a!.runplane.agentHub.idle().get(POOL)).toBe(1), { timeout: 5_000, interval: 10 });
    expect((await a!.call("DELETE", `/api/v2/authentication-tokens/${a!.agentTokenId}`)).status).toBe(204);
    expect((await waiting).status).toBe(401);
    // Long before the job's own deadline (60 s): the revocation gave the row back.
    await vi.waitFor(() => released(resultId), { timeout: 5_000, interval: 25 });
    expect((await protocol(a!, `jobs/${job.id}/result`, answered200(agentId), a!.agentToken)).status).toBe(401);
    expect((await protocol(a!, "jobs/next", { "agent-id": agentId }, a!.agentToken)).status).toBe(401);
  });

  it("ends a poll waiting on this host when another host revokes the token (the poll re-checks it)", async () => {
    receiver = await startLoopbackServer({ kind: "respond", status: 200 });
    a = await agentApp();
    const agentId = await registerRaw(a);
    const waiting = protocol(a, "jobs/next", { "agent-id": agentId, "wait-ms": 20_000 }, a.agentToken);
    await vi.waitFor(() => expect(a!.runplane.agentHub.idle().get(POOL)).toBe(1), { timeout: 5_000, interval: 10 });
    const hostB = createRunplane({ storage: a.storage, keyring: { keys: [{ id: "k1", key: generateKey() }] }, logger: silentLogger, host: false });
    await hostB.agentTokens.delete(a.agentTokenId);
    expect((await waiting).status).toBe(401);
  });
});

describe("agents racing", () => {
  it("hands one job to exactly one of several agents waiting for it, and the integration hears it once", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    const agents = [a.agent({ concurrency: 3 }), a.agent({ concurrency: 3, name: "second" })];
    await Promise.all(agents.map((x) => x.agentId));
    const { resultId } = await startPoolRun(a, receiver.url("/hook"));
    a.dispatcher().start();
    await vi.waitFor(async () => expect((await a!.storage.taskResults.get(resultId))?.status).toBe("running"), { timeout: 10_000, interval: 25 });
    expect(deliveriesTo(receiver.requests)).toHaveLength(1);
    expect((await a.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 })).items).toHaveLength(1);
  });

  it("never hands a pool's job to an agent of another pool", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    const mine = a.agent();
    await mine.agentId;
    const { resultId } = await startPoolRun(a, receiver.url("/hook"));
    await mine.stop();
    await a.runplane.directory.agentPools.create({ id: "apool-other", name: "other", organization: "acme" });
    const otherToken = (await a.runplane.agentTokens.create("apool-other", { description: "o", createdBy: { type: "organizations", id: "acme" } })).token;
    const stranger = await registerRaw(a, otherToken, "stranger");
    a.dispatcher().start();
    const poll = await protocol(a, "jobs/next", { "agent-id": stranger, "wait-ms": 1_000 }, otherToken);
    expect(poll.status).toBe(204);
    expect(await rowOf(resultId)).toMatchObject({ leaseOwner: null, attempt: 0, closedAt: null });
    expect(deliveriesTo(receiver.requests)).toHaveLength(0);
  });
});

describe("an agent that goes away while it waits", () => {
  it("is not handed a job: its poll's connection closed, the next waiting agent gets it at once", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    const live = a.agent({ name: "live" });
    await live.agentId;
    const { resultId } = await startPoolRun(a, receiver.url("/hook"));
    await live.stop();
    // A poll that waits first, then its agent vanishes (the connection closes).
    const gone = await registerRaw(a, a.agentToken, "gone");
    const abandoned = new AbortController();
    const poll = fetch(`${a.origin}/api/agent/v1/jobs/next`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.agentToken}`, "content-type": "application/json" },
      body: JSON.stringify({ "agent-id": gone, "wait-ms": 20_000 }),
      signal: abandoned.signal,
    }).catch(() => null);
    await vi.waitFor(() => expect(a!.runplane.agentHub.idle().get(POOL)).toBe(1), { timeout: 5_000, interval: 10 });
    abandoned.abort();
    await poll;
    const next = a.agent({ name: "next" });
    await next.agentId;
    a.dispatcher().start();
    // Well before a lost job would come back (10 s + 3 s).
    await vi.waitFor(async () => expect((await a!.storage.taskResults.get(resultId))?.status).toBe("running"), { timeout: 5_000, interval: 25 });
    expect((await a.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 })).items).toHaveLength(1);
  });
});

describe("an agent stopping with a job in hand", () => {
  it("sends it, reports it (one attempt, nothing sent again) and then deregisters", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200, delayMs: 400 }));
    a = await agentApp();
    const agent = a.agent();
    const agentId = await agent.agentId;
    const { resultId } = await startPoolRun(a, receiver.url("/hook"));
    a.dispatcher({ agents: { timeoutMs: 5_000, marginMs: 1_000 } }).start();
    await vi.waitFor(() => expect(deliveriesTo(receiver!.requests)).toHaveLength(1), { timeout: 5_000, interval: 10 });
    await agent.stop();
    expect((await a.storage.taskResults.get(resultId))?.status).toBe("running");
    expect((await a.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 })).items).toHaveLength(1);
    expect(deliveriesTo(receiver.requests)).toHaveLength(1);
    expect((await a.call("GET", `/api/v2/agents/${agentId}`)).json.data.attributes.status).toBe("exited");
  });
});

describe("a pool with no agent connected", () => {
  it("does not hold a run forever: the result's deadline starts with its stage, and it ends unreachable, no attempt made", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp({ deadline: { idle: "1s", max: "1s" } });
    const agent = a.agent();
    await agent.agentId;
    const { resultId } = await startPoolRunAfter(a, receiver.url("/hook"), () => agent.stop());
    expect((await a.storage.taskResults.get(resultId))?.deadlineAt).not.toBeNull();
    a.dispatcher().start();
    await vi.waitFor(async () => expect((await a!.storage.taskResults.get(resultId))?.status).toBe("unreachable"), { timeout: 10_000, interval: 50 });
    expect(deliveriesTo(receiver.requests)).toHaveLength(0);
    expect((await a.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 20 })).items).toStrictEqual([]);
  });
});

/** A pool run whose task was saved through an agent, started once `between` (e.g. the agent's stop) is done. */
async function startPoolRunAfter(app: AgentApp, url: string, between: () => Promise<void>) {
  const res = await app.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("lonely", url) });
  expect(res.status).toBe(201);
  await attachTask(app, res.json.data.id, "mandatory", ["post_plan"]);
  await between();
  const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
  const stage = stages.find((s) => s.stage === "post_plan")!;
  await app.runplane.runTasks.startStage(run.id, "post_plan");
  const [result] = await app.runplane.runTasks.listResults(stage.id);
  return { resultId: result!.id };
}
