import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentsNote, agentsVerdict } from "../../examples/server/check-agents.js";
import { doctor } from "../../src/cli/doctor.js";
import { createResultsPage } from "../../src/index.js";
import { deliveriesTo, tasksAnswer } from "../delivery/support.js";
import { attachTask } from "../helpers/run-tasks.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { agentApp, poolTaskBody, type AgentApp } from "./support.js";

// Found by an operator (issue 43): with the pool's only agent gone, the run page said "waiting for
// its run tasks", the result was `pending` with 0 attempts, `/healthz` said ok, and at the deadline
// the page said "the integration never accepted the request" and the home list "integration
// failing", though no request was ever sent. decision D34: a pool result says it waits for an
// agent of its pool, and since when none has been connected (on any host).

let receiver: LoopbackServer | undefined;
let a: AgentApp | undefined;
afterEach(async () => {
  await a?.close();
  await receiver?.close();
  a = undefined;
  receiver = undefined;
});

/** A pool run whose task was saved through an agent that then stopped: no agent is left. */
async function orphanedPoolRun(app: AgentApp, url: string): Promise<{ resultId: string; runId: string; stoppedAt: string }> {
  const agent = app.agent();
  const agentId = await agent.agentId;
  const res = await app.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("lonely", url) });
  expect(res.status).toBe(201);
  await attachTask(app, res.json.data.id, "mandatory", ["post_plan"]);
  await agent.stop();
  const stoppedAt = (await app.storage.agents.get(agentId))!.lastPingAt;
  const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
  await app.runplane.runTasks.startStage(run.id, "post_plan");
  const [result] = await app.runplane.runTasks.listResults(stages.find((s) => s.stage === "post_plan")!.id);
  return { resultId: result!.id, runId: run.id, stoppedAt };
}

const pageOf = async (app: AgentApp, runId: string): Promise<string> => {
  const page = createResultsPage(app.runplane, { prefix: "/app" });
  const res = await page(new Request(`http://localhost/app/runs/${runId}`, { headers: { authorization: `Bearer ${app.ownerToken}` } }));
  expect(res.status).toBe(200);
  return res.text();
};

describe("a pool result while no agent of its pool is connected", () => {
  it("says in the task result API and on the run page that it waits for an agent of the pool, and since when none has been connected", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    const { resultId, runId, stoppedAt } = await orphanedPoolRun(a, receiver.url("/hook"));
    a.dispatcher().start();

    const res = await a.call("GET", `/api/v2/task-results/${resultId}`);
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toMatchObject({
      status: "pending",
      "agent-pool-id": "apool-inside",
      "agent-pool-name": "inside",
      "agent-connected": false,
      "agent-last-seen-at": stoppedAt,
      "waiting-for-agent": `waiting for an agent of pool "inside": no agent connected since ${stoppedAt}`,
    });
    const html = await pageOf(a, runId);
    expect(html).toContain(`waiting for an agent of pool &quot;inside&quot;: no agent connected since`);
    expect(html).not.toContain("is waiting for its run tasks");
  });

  it("after its only agent is deleted, does not claim no agent of the pool has ever connected (found from outside, D46)", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    const { resultId } = await orphanedPoolRun(a, receiver.url("/hook"));
    const { items } = await a.storage.agents.listByPool("apool-inside", {}, { offset: 0, limit: 10 });
    for (const agent of items) expect((await a.call("DELETE", `/api/v2/agents/${agent.id}`)).status).toBe(204);
    const res = await a.call("GET", `/api/v2/task-results/${resultId}`);
    expect(res.json.data.attributes["waiting-for-agent"]).toBe('waiting for an agent of pool "inside": no agent of it is connected');
  });

  it("at the deadline says no agent of the pool took the request, on the result and the page, never that the integration refused it", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp({ deadline: { idle: "1s", max: "1s" } });
    const { resultId, runId } = await orphanedPoolRun(a, receiver.url("/hook"));
    a.dispatcher().start();
    await vi.waitFor(async () => expect((await a!.storage.taskResults.get(resultId))?.status).toBe("unreachable"), { timeout: 10_000, interval: 50 });
    expect(deliveriesTo(receiver.requests)).toHaveLength(0);
    const { message } = (await a.storage.taskResults.get(resultId))!;
    expect(message).toMatch(/^No agent of pool "inside" took the request before the deadline \(no agent connected since .+\); the integration was never sent it\.$/);
    const html = await pageOf(a, runId);
    expect(html).toContain("No agent of pool &quot;inside&quot; took the request before the deadline");
    expect(html).not.toMatch(/never accepted|integration failing|No attempt is recorded/);
  });

  it("makes health() degraded, naming the pool, once a delivery has waited longer than health.noAgentFor with no agent connected anywhere", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp({ health: { noAgentFor: "1s" } });
    await orphanedPoolRun(a, receiver.url("/hook"));
    await vi.waitFor(async () => expect((await a!.runplane.health()).reasons).toStrictEqual([expect.stringMatching(/^agent pool "inside" \(apool-inside\): 1 delivery waiting, no agent connected for \d+s \(longer than 1s\)$/)]), { timeout: 5_000, interval: 100 });
    expect((await a.runplane.health()).status).toBe("degraded");
    // An agent connects: the reason goes at once.
    const agent = a.agent();
    await agent.agentId;
    expect((await a.runplane.health()).reasons).toStrictEqual([]);
  });
});

describe("runplane doctor: agents", () => {
  it("lists each pool with its agents, how many are connected, and the deliveries waiting for one", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    await orphanedPoolRun(a, receiver.url("/hook"));
    const lines = (await agentsNote(a.storage, new Date())).split("\n");
    expect(lines[0]).toBe("1 pool");
    expect(lines[1]).toMatch(/^ {7}pool "inside" \(apool-inside\): 1 agent, 0 connected; 1 delivery waiting, the oldest due \d+ s ago$/);
    expect(lines[2]).toMatch(/^ {9}test-agent \(agent-\w+\): exited, last seen \d+ s ago$/);
  });

  it("warns, naming the pool and how long its deliveries have waited, when deliveries wait and no agent of the pool is connected (found from outside)", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    await orphanedPoolRun(a, receiver.url("/hook"));
    const verdict = await agentsVerdict(a.storage, new Date());
    expect("warn" in verdict).toBe(true);
    const lines = (verdict as { warn: string }).warn.split("\n");
    expect(lines[0]).toMatch(/^pool "inside" \(apool-inside\): 1 delivery waiting, the oldest due \d+ s ago, and no agent of the pool is connected; start one \(runplane agent\) or check why its agents stopped$/);
    expect(lines).toContain("1 pool");
    // An agent connects: the line is ok again.
    const agent = a.agent();
    await agent.agentId;
    expect("note" in (await agentsVerdict(a.storage, new Date()))).toBe(true);
  });

  it("has an agents line in doctor's output", async () => {
    const dir = mkdtempSync(join(tmpdir(), "runplane-doctor-agents-"));
    vi.stubEnv("DATABASE_URL", "");
    vi.stubEnv("RUNPLANE_KEYRING", "");
    try {
      const out: string[] = [];
      await doctor(["--data-dir", dir, "--port", "0", "--integration-port", "0"], (line) => out.push(line));
      expect(out.find((l) => l.startsWith("ok   agents: "))).toBe("ok   agents: none recorded yet (the database is new, or its migrations are pending)");
    } finally {
      vi.unstubAllEnvs();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
