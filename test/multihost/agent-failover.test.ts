import { describe, expect, it, vi } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { generateKey } from "../../src/index.js";
import { deliveriesTo, isVerification } from "../delivery/support.js";
import { startLoopbackServer, type ReceivedRequest, type Reply } from "../helpers/loopback-server.js";
import { DATABASE_URL, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { twoHostsOnPostgres } from "./two-hosts.js";
import { agentApp, poolTaskBody } from "../agent/support.js";
import { attachTask } from "../helpers/run-tasks.js";

// Decision D34 with several hosts on one PostgreSQL schema: work created on host B reaches an agent
// waiting on host A at once (B's stage start wakes A, D27), and when A dies mid-job its lease runs
// out and host B, with an agent of the pool, delivers the row. decision D58: A recorded the attempt
// when it handed the job out; B's claim closes it as no report before its own: two attempts.

const reachable = await postgresReachable("agent failover");
const { t, startHostA } = twoHostsOnPostgres();

describe.skipIf(!reachable)("agents with several hosts on PostgreSQL", () => {
  it("delivers work created on host B through an agent waiting on host A, and after A dies mid-job through B, both attempts recorded", async () => {
    const key = generateKey();
    t.schema = uniqueSchema("agents");
    // Verifications 200; the second run's request is never answered (host A dies holding it).
    let hang: string | null = null;
    t.receiver = await startLoopbackServer((req: ReceivedRequest): Reply =>
      isVerification(req) || JSON.parse(req.body.toString()).task_result_id !== hang ? { kind: "respond", status: 200 } : { kind: "hang" });
    t.b = await agentApp({ storage: await createPostgresStorage(DATABASE_URL, { schema: t.schema }), keyring: { keys: [{ id: "k1", key }] } });
    t.b.dispatcher({ pollIntervalMs: 200, leaseMs: 4_000, agents: { timeoutMs: 1_500, marginMs: 300 } }).start();
    const originA = await startHostA(key);
    const onA = t.b.agent({ url: originA, name: "on-a", pollWaitMs: 25_000 });
    await onA.agentId;

    // The task is saved through host A, whose agent answers the verification.
    const saved = await fetch(`${originA}/api/v2/organizations/acme/tasks`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.b.ownerToken}`, "content-type": "application/vnd.api+json" },
      body: JSON.stringify(poolTaskBody("scan", t.receiver.url("/hook"))),
    });
    expect(saved.status).toBe(201);
    await attachTask(t.b, ((await saved.json()) as any).data.id, "mandatory", ["post_plan"]);

    const startRun = async () => {
      const { run, stages } = await t.b!.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
      const stage = stages.find((s) => s.stage === "post_plan")!;
      const [result] = await t.b!.runplane.runTasks.listResults(stage.id);
      return { start: () => t.b!.runplane.runTasks.startStage(run.id, "post_plan"), resultId: result!.id };
    };
    const running = (id: string) => vi.waitFor(async () => expect((await t.b!.storage.taskResults.get(id))?.status).toBe("running"), { timeout: 10_000, interval: 50 });
    const sentFor = (id: string) => deliveriesTo(t.receiver!.requests).filter((r) => JSON.parse(r.body.toString()).task_result_id === id);

    // Started on B: only A's agent can send it, well before A's poll (1 min) or the agent's next poll (25 s).
    const first = await startRun();
    await first.start();
    await running(first.resultId);
    expect(sentFor(first.resultId)).toHaveLength(1);

    const second = await startRun();
    hang = second.resultId;
    await second.start();
    await vi.waitFor(() => expect(sentFor(second.resultId)).toHaveLength(1), { timeout: 10_000, interval: 20 });
    t.hostA!.kill("SIGKILL");
    const onB = t.b.agent({ name: "on-b" });
    await onB.agentId;
    hang = null;
    await running(second.resultId);
    expect(sentFor(second.resultId)).toHaveLength(2);
    const attempts = await t.b.runplane.runTasks.listDeliveryAttempts(second.resultId, { offset: 0, limit: 20 });
    expect(attempts.items.map((x) => [x.number, x.status, x.errorCode])).toStrictEqual([[2, 200, null], [1, null, "no-report"]]);
    expect(attempts.items[1]!.detail).toBe("no report from agent on-a: the integration may have received the request");
  }, 60_000);
});
