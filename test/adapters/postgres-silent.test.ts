import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestApp, type TestApp, type TestResponse } from "../helpers/app.js";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";
import { DATABASE_URL, postgresReachable } from "../helpers/postgres.js";
import { proxiedPostgres, type ProxiedPostgres } from "../helpers/proxied-postgres.js";
import { throughProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

// Decision D28: a database that goes silent (packets dropped, no reset: a partition, a
// hung server) or a pool with no connection to spare is an unavailable storage. The host's pool
// sets none of node-postgres' timeouts, as a host's may not: the adapter's own bound (here 300 ms)
// must answer 503 with Retry-After instead of hanging until the test's timeout.

const reachable = await postgresReachable("postgres silent");

describe.skipIf(!reachable)("a PostgreSQL that goes silent (D28)", () => {
  let db: ProxiedPostgres;
  let proxy: TcpProxy;
  let pool: pg.Pool;
  let app: TestApp;
  const readVars = (): Promise<TestResponse> => app.call("GET", "/api/v2/workspaces/ws-a/vars");
  const unavailable = (res: TestResponse): void => {
    expect(res.status, res.text).toBe(503);
    expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
    expect(res.json.errors[0]).toMatchObject({ status: "503", title: "service unavailable" });
  };
  /** Sends the read until it answers 200: the pool recovers by itself once the database is back. */
  const recovered = async (): Promise<void> => {
    for (let res = await readVars(); res.status !== 200; res = await readVars()) expect(res.status, res.text).toBe(503);
  };

  beforeAll(async () => {
    // The host's pool sets none of node-postgres' timeouts; the adapter's own bound is 300 ms.
    db = await proxiedPostgres("silent", { max: 3 }, { timeoutMs: 300 });
    ({ proxy, pool } = db);
    app = await createTestApp({ storage: db.storage });
  });
  beforeEach(async () => {
    await proxy.open();
    await recovered();
  });
  afterAll(async () => {
    await db?.close(() => app?.runplane.close());
  });

  it("answers 503 with Retry-After on its open connections, and recovers when the network heals", async () => {
    expect(proxy.connections).toBeGreaterThan(0);
    proxy.blackhole();
    unavailable(await readVars());
    unavailable(await app.call("POST", "/api/v2/workspaces/ws-a/vars", { body: { data: { type: "vars", attributes: { key: "k", value: "v", category: "env" } } } }));
    await proxy.open();
    await recovered();
  });

  it("answers 503 when a new connection gets no answer", async () => {
    // The partition drops the pool's connections first, so every request needs a new one.
    proxy.blackhole();
    await proxy.open();
    proxy.blackhole();
    unavailable(await readVars());
  });

  it("says so in health() instead of hanging", async () => {
    proxy.blackhole();
    const health = await app.runplane.health();
    expect(health.storage).toBe("unreachable");
    expect(health.reasons[0]).toMatch(/^storage unreachable: /);
  });

  it("refuses to start on a silent database within its bound, before any migration (StorageUnavailableError)", async () => {
    proxy.blackhole();
    const fresh = new pg.Pool({ connectionString: throughProxy(DATABASE_URL, proxy), max: 2 });
    fresh.on("error", () => undefined);
    try {
      await expect(createPostgresStorage(fresh, { schema: "rp_silent_never", timeoutMs: 300 })).rejects.toBeInstanceOf(StorageUnavailableError);
    } finally {
      await proxy.open();
      await fresh.end().catch(() => undefined);
    }
  });

  it("answers 503 while every connection of the pool is held, and serves again once one is free", async () => {
    const held = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
    try {
      unavailable(await readVars());
    } finally {
      for (const client of held) client.release();
    }
    await recovered();
  });
});
