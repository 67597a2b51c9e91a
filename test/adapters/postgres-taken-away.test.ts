import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createPostgresStorage, type PostgresStorage } from "../../adapters/postgres/index.js";
import { createTestApp, type TestApp, type TestResponse } from "../helpers/app.js";
import { DATABASE_URL, postgresReachable } from "../helpers/postgres.js";

// Decision D28: the ways an operator takes a database away without stopping the server
// each answer 503 with Retry-After, never 500, and the API serves again once it is given back. Each
// case runs on a database and a login role of its own, made here, so the server others share is
// untouched. (Restart and reset: postgres-outage and multihost/postgres-restart; a silent network
// and a full pool: postgres-silent.)

const reachable = await postgresReachable("postgres taken away");
const suffix = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const database = `rp_away_${suffix}`;
const role = `rp_away_role_${suffix}`;

describe.skipIf(!reachable)("a PostgreSQL database taken away by its operator (D28)", () => {
  let admin: pg.Pool;
  let pool: pg.Pool;
  let storage: PostgresStorage;
  let app: TestApp;
  let beatNow: () => void = () => undefined;
  const readVars = (): Promise<TestResponse> => app.call("GET", "/api/v2/workspaces/ws-a/vars");
  const createVar = (key: string): Promise<TestResponse> =>
    app.call("POST", "/api/v2/workspaces/ws-a/vars", { body: { data: { type: "vars", attributes: { key, value: "v", category: "env" } } } });
  const unavailable = (res: TestResponse): void => {
    expect(res.status, res.text).toBe(503);
    expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
    expect(res.json.errors[0]).toMatchObject({ status: "503", title: "service unavailable" });
    expect(res.text).not.toMatch(/SQLSTATE|ALTER|rp_away/);
  };
  /** The role's open connections end, as after a failover or an operator's `pg_terminate_backend`. */
  const dropConnections = async (): Promise<void> => {
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [database]);
  };
  /** Sends the request until it is not 503: the pool recovers by itself once the database is back. */
  const recovered = async (send: () => Promise<TestResponse>): Promise<TestResponse> => {
    for (;;) {
      const res = await send();
      if (res.status !== 503) return res;
    }
  };
  /** The reason health() gives, once the pool's old connections are gone. */
  const healthReason = async (): Promise<string> => (await app.runplane.health()).reasons[0] ?? "";

  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    await admin.query(`CREATE ROLE "${role}" LOGIN`);
    await admin.query(`CREATE DATABASE "${database}" OWNER "${role}"`);
    const url = new URL(DATABASE_URL);
    url.username = role;
    url.pathname = `/${database}`;
    pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
    pool.on("error", () => undefined);
    storage = await createPostgresStorage(pool, { timeoutMs: 2_000 });
    // The host's heartbeat (its one write, D29a) runs when the test says: no 15 s timer to wait for.
    app = await createTestApp({ storage, host: { schedule: (_, beat) => ((beatNow = beat), () => undefined) } });
  });
  afterAll(async () => {
    await app?.runplane.close();
    await pool?.end().catch(() => undefined);
    if (admin) {
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS "${role}"`);
      await admin.end();
    }
  });

  it("answers 503 while the database does not allow connections (55000), and serves once it does", async () => {
    await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`);
    await dropConnections();
    unavailable(await readVars());
    expect(await healthReason()).toBe("storage unreachable: database not accepting connections");
    await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
    expect((await recovered(readVars)).status).toBe(200);
  });

  it("answers writes 503 and still serves reads while the database is read-only, as a standby after a failover (25006)", async () => {
    await admin.query(`ALTER DATABASE "${database}" SET default_transaction_read_only = on`);
    await dropConnections();
    expect((await recovered(readVars)).status).toBe(200);
    unavailable(await createVar("during_failover"));
    // Readiness says so too, though every read answers: the host's next beat could not be written.
    beatNow();
    await vi.waitFor(async () => expect(await healthReason()).toBe("storage refuses writes: database is read-only"));
    await admin.query(`ALTER DATABASE "${database}" RESET default_transaction_read_only`);
    await dropConnections();
    expect((await recovered(() => createVar("after_failover"))).status).toBe(201);
  });

  it("answers 503 while its login is refused (class 28: a password changed, a role that may no longer log in)", async () => {
    await admin.query(`ALTER ROLE "${role}" NOLOGIN`);
    await dropConnections();
    unavailable(await readVars());
    expect(await healthReason()).toBe("storage unreachable: login refused");
    await admin.query(`ALTER ROLE "${role}" LOGIN`);
    expect((await recovered(readVars)).status).toBe(200);
  });

  it("reports a table held by a lock as a busy storage that answers, not an unreachable one", async () => {
    // An operator's migration or a long transaction holds the table every health read touches.
    const url = new URL(DATABASE_URL);
    url.pathname = `/${database}`;
    const locker = new pg.Client({ connectionString: url.toString() });
    await locker.connect();
    try {
      await locker.query("BEGIN; LOCK TABLE organizations IN ACCESS EXCLUSIVE MODE");
      const health = await app.runplane.health();
      expect(health.status).toBe("degraded");
      expect(health.storage).toBe("busy");
      expect(health.reasons[0]).toMatch(/^storage busy: /);
      expect(health.reasons.join("\n")).not.toContain("unreachable");
      // A write held by a lock is not applied, and its 503 does not say the storage is away.
      await locker.query("LOCK TABLE variables IN ACCESS EXCLUSIVE MODE");
      const held = await createVar("while_locked");
      unavailable(held);
      expect(held.json.errors[0].detail).not.toContain("cannot be reached");
      expect(held.json.errors[0].detail).toMatch(/^The storage (is busy right now|did not answer in time)/);
    } finally {
      await locker.end();
    }
    expect((await app.runplane.health()).status).toBe("ok");
  }, 20_000);

  it("answers 503 once the database is dropped (3D000)", async () => {
    await admin.query(`DROP DATABASE "${database}" WITH (FORCE)`);
    unavailable(await readVars());
    expect(await healthReason()).toBe("storage unreachable: database does not exist");
  });
});
