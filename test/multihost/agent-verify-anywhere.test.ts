import { describe, expect, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { generateKey } from "../../src/index.js";
import { isVerification } from "../delivery/support.js";
import { startLoopbackServer } from "../helpers/loopback-server.js";
import { DATABASE_URL, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { twoHostsOnPostgres } from "./two-hosts.js";
import { agentApp, poolTaskBody } from "../agent/support.js";

// Found by an operator (issue 43): behind a load balancer "connected" meant connected to the host
// serving the request, so a private task's creation failed at random. decision D34: a pool task is
// verified through an agent of the pool connected to ANY host, over the storage's relay (NOTIFY).

const reachable = await postgresReachable("agent verification from any host");
const { t, startHostA } = twoHostsOnPostgres();

describe.skipIf(!reachable)("a pool task's verification with several hosts on PostgreSQL", () => {
  it("goes through the pool's agent on host A when host B serves the request: 201, one verification request", async () => {
    const key = generateKey();
    t.schema = uniqueSchema("verify");
    t.receiver = await startLoopbackServer({ kind: "respond", status: 200 });
    t.b = await agentApp({ storage: await createPostgresStorage(DATABASE_URL, { schema: t.schema }), keyring: { keys: [{ id: "k1", key }] } });
    const originA = await startHostA(key);

    // No agent anywhere: 422 on B, nothing sent.
    const none = await t.b.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("scan", t.receiver.url("/hook")) });
    expect(none.status).toBe(422);
    expect(t.receiver.requests).toHaveLength(0);

    // An agent polls host A only; host B serves the create.
    const onA = t.b.agent({ url: originA, name: "on-a", pollWaitMs: 25_000 });
    await onA.agentId;
    expect(t.b.runplane.agentHub.connected("apool-inside")).toBe(false);
    const saved = await t.b.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("scan", t.receiver.url("/hook")) });
    expect(saved.status, saved.text).toBe(201);
    expect(t.receiver.requests.filter(isVerification)).toHaveLength(1);

    // An integration that refuses: the 422 names its answer, through the other host too.
    t.receiver.setScript({ kind: "respond", status: 401, body: "no such key" });
    const refused = await t.b.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("scan-2", t.receiver.url("/hook")) });
    expect(refused.status).toBe(422);
    expect(refused.json.errors[0].detail).toMatch(/401/);
  }, 60_000);
});
