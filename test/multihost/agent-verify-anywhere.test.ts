import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { generateKey } from "../../src/index.js";
import { isVerification } from "../delivery/support.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { agentApp, poolTaskBody, type AgentApp } from "../agent/support.js";

// Found by an operator (issue 43): behind a load balancer "connected" meant connected to the host
// serving the request, so a private task's creation failed at random. decision D34: a pool task is
// verified through an agent of the pool connected to ANY host, over the storage's relay (NOTIFY).

const reachable = await postgresReachable("agent verification from any host");
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

describe.skipIf(!reachable)("a pool task's verification with several hosts on PostgreSQL", () => {
  it("goes through the pool's agent on host A when host B serves the request: 201, one verification request", async () => {
    const key = generateKey();
    schema = uniqueSchema("verify");
    receiver = await startLoopbackServer({ kind: "respond", status: 200 });
    b = await agentApp({ storage: await createPostgresStorage(DATABASE_URL, { schema }), keyring: { keys: [{ id: "k1", key }] } });
    const originA = await startHostA(key);

    // No agent anywhere: 422 on B, nothing sent.
    const none = await b.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("scan", receiver.url("/hook")) });
    expect(none.status).toBe(422);
    expect(receiver.requests).toHaveLength(0);

    // An agent polls host A only; host B serves the create.
    const onA = b.agent({ url: originA, name: "on-a", pollWaitMs: 25_000 });
    await onA.agentId;
    expect(b.runplane.agentHub.connected("apool-inside")).toBe(false);
    const saved = await b.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("scan", receiver.url("/hook")) });
    expect(saved.status, saved.text).toBe(201);
    expect(receiver.requests.filter(isVerification)).toHaveLength(1);

    // An integration that refuses: the 422 names its answer, through the other host too.
    receiver.setScript({ kind: "respond", status: 401, body: "no such key" });
    const refused = await b.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("scan-2", receiver.url("/hook")) });
    expect(refused.status).toBe(422);
    expect(refused.json.errors[0].detail).toMatch(/401/);
  }, 60_000);
});
