import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { VERIFY_WAIT_MS } from "../../src/delivery/agent-sessions.js";
import type { Storage } from "../../src/storage/types.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { agentApp, answered200, poolTaskBody, protocol, registerRaw, type AgentApp } from "./support.js";

// Found from outside: with the pool's only agent busy (concurrency 1, delivering a request its
// integration answers slowly), creating a pool task answered 503 "The storage cannot be reached"
// after 10 s, or 422 "could not be reached: the connection failed", though storage and URL were
// fine. decision D34: a verification through an agent has its own bound, and when no agent of the
// pool takes it in time the 422 says so, telling busy agents from none connected.

const reachable = await postgresReachable("verification while agents are busy");

let a: AgentApp | undefined;
let schema: string | undefined;
afterEach(async () => {
  await a?.close();
  if (schema) {
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    await dropSchema(admin, schema);
    await admin.end();
  }
  a = schema = undefined;
});

async function busyVerification(storage?: Storage): Promise<void> {
    a = await agentApp(storage ? { storage } : {});
    const agentId = await registerRaw(a);
    const poll = protocol(a, "jobs/next", { "agent-id": agentId, "wait-ms": 5_000 }, a.agentToken);
    const first = a.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("first", "http://127.0.0.1:9/hook") });
    const job = await poll;
    expect(job.status).toBe(200);

    const started = Date.now();
    const second = await a.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("second", "http://127.0.0.1:9/hook") });
    const took = Date.now() - started;
    expect(second.status).toBe(422);
    expect(second.json.errors[0]).toMatchObject({
      detail: `no agent of pool inside (apool-inside) took the verification request within ${VERIFY_WAIT_MS / 1000} s: its agents are busy`,
      source: { pointer: "/data/relationships/agent-pool" },
    });
    expect(took).toBeGreaterThanOrEqual(VERIFY_WAIT_MS - 50);
    expect(took).toBeLessThan(VERIFY_WAIT_MS + 2_000);

    await protocol(a, `jobs/${job.json.id}/result`, answered200(agentId), a.agentToken);
    expect((await first).status).toBe(201);
}

describe("a pool task's verification while the pool's agents are busy", () => {
  it("answers 422 within the bound saying no agent of the pool took it because its agents are busy", () => busyVerification(), 20_000);

  // The operator's 503: the wait for an agent counted as storage time (a bound of 1 s here).
  it.skipIf(!reachable)("answers that 422 on PostgreSQL with a storage bound shorter than the wait, never a storage 503", async () => {
    schema = uniqueSchema("vbusy");
    await busyVerification(await createPostgresStorage(DATABASE_URL, { schema, timeoutMs: 1_000 }));
  }, 30_000);
});
