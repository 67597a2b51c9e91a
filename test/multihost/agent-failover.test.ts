import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { generateKey } from "../../src/index.js";
import { deliveriesTo, isVerification } from "../delivery/support.js";
import { startLoopbackServer, type LoopbackServer, type ReceivedRequest, type Reply } from "../helpers/loopback-server.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { agentApp, poolTaskBody, type AgentApp } from "../agent/support.js";
import { attachTask } from "../helpers/run-tasks.js";
import pg from "pg";

// Decision D34 with several hosts on one PostgreSQL schema: work created on host B reaches an agent
// waiting on host A at once (B's stage start wakes A, D27), and when A dies mid-job its lease runs
// out and host B, with an agent of the pool, delivers the row: one attempt recorded.

const reachable = await postgresReachable("agent failover");
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let receiver: LoopbackServer | undefined;
let b: AgentApp | undefined;
let hostA: ChildProcess | undefined;
let schema: string | undefined;
afterEach(async () => {
  hostA?.kill("SIGKILL");
  await b?.close();
  await receiver?.close();
  if (schema) {
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    await dropSchema(admin, schema);
    await admin.end();
  }
  receiver = b = hostA = schema = undefined;
});

function startHostA(key: string): Promise<string> {
  hostA = spawn(process.execPath, ["--import", "tsx", "test/multihost/fixtures/agent-host.ts"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", DATABASE_URL, SCHEMA: schema!, KEY: key },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    hostA!.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
      const port = /ready (\d+)/.exec(out)?.[1];
      if (port) resolve(`http://127.0.0.1:${port}`);
    });
    hostA!.once("exit", () => reject(new Error(`host A exited: ${out}`)));
  });
}

describe.skipIf(!reachable)("agents with several hosts on PostgreSQL", () => {
  it("delivers work created on host B through an agent waiting on host A, and after A dies mid-job through B, once", async () => {
    const key = generateKey();
    schema = uniqueSchema("agents");
    // Verifications 200; the second run's request is never answered (host A dies holding it).
    let hang: string | null = null;
    receiver = await startLoopbackServer((req: ReceivedRequest): Reply =>
      isVerification(req) || JSON.parse(req.body.toString()).task_result_id !== hang ? { kind: "respond", status: 200 } : { kind: "hang" });
    b = await agentApp({ storage: await createPostgresStorage(DATABASE_URL, { schema }), keyring: { keys: [{ id: "k1", key }] } });
    b.dispatcher({ pollIntervalMs: 200, leaseMs: 4_000, agents: { timeoutMs: 1_500, marginMs: 300 } }).start();
    const originA = await startHostA(key);
    const onA = b.agent({ url: originA, name: "on-a", pollWaitMs: 25_000 });
    await onA.agentId;

    // The task is saved through host A, whose agent answers the verification.
    const saved = await fetch(`${originA}/api/v2/organizations/acme/tasks`, {
      method: "POST",
      headers: { authorization: `Bearer ${b.ownerToken}`, "content-type": "application/vnd.api+json" },
      body: JSON.stringify(poolTaskBody("scan", receiver.url("/hook"))),
    });
    expect(saved.status).toBe(201);
    await attachTask(b, ((await saved.json()) as any).data.id, "mandatory", ["post_plan"]);

    const startRun = async () => {
      const { run, stages } = await b!.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
      const stage = stages.find((s) => s.stage === "post_plan")!;
      const [result] = await b!.runplane.runTasks.listResults(stage.id);
      return { start: () => b!.runplane.runTasks.startStage(run.id, "post_plan"), resultId: result!.id };
    };
    const running = (id: string) => vi.waitFor(async () => expect((await b!.storage.taskResults.get(id))?.status).toBe("running"), { timeout: 10_000, interval: 50 });
    const sentFor = (id: string) => deliveriesTo(receiver!.requests).filter((r) => JSON.parse(r.body.toString()).task_result_id === id);

    // Started on B: only A's agent can send it, well before A's poll (1 min) or the agent's next poll (25 s).
    const first = await startRun();
    await first.start();
    await running(first.resultId);
    expect(sentFor(first.resultId)).toHaveLength(1);

    const second = await startRun();
    hang = second.resultId;
    await second.start();
    await vi.waitFor(() => expect(sentFor(second.resultId)).toHaveLength(1), { timeout: 10_000, interval: 20 });
    hostA!.kill("SIGKILL");
    const onB = b.agent({ name: "on-b" });
    await onB.agentId;
    hang = null;
    await running(second.resultId);
    expect(sentFor(second.resultId)).toHaveLength(2);
    const attempts = await b.runplane.runTasks.listDeliveryAttempts(second.resultId, { offset: 0, limit: 20 });
    expect(attempts.items.map((x) => [x.number, x.status])).toStrictEqual([[1, 200]]);
  });
});
