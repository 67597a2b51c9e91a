import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStorageError, run, sql, transaction } from "../../adapters/postgres/driver.js";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { postgresUnavailable } from "../../adapters/postgres/unavailable.js";
import { isStorageUnavailableError, StorageUnavailableError } from "../../src/storage/unavailable.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.js";

// Decision D28: the PostgreSQL adapter tells "the database cannot be reached" from every other
// failure, on errors produced for real: a closed port, a connection dropped or reset under a
// statement (through a loopback proxy, so the shared server is never touched), a backend
// terminated by an administrator, a pool whose connections are all checked out.

const reachable = await postgresReachable("postgres unavailable");

/** What `promise` rejected with; fails the test when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

async function expectUnavailable(promise: Promise<unknown>, reason: string): Promise<StorageUnavailableError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(StorageUnavailableError);
  expect((error as StorageUnavailableError).reason).toBe(reason);
  // decision D28: nothing of the connection (host, port, user) or of the statement in the message.
  expect((error as Error).message).not.toMatch(/127\.0\.0\.1|5432|postgres@|SELECT/i);
  return error as StorageUnavailableError;
}

const upstream = (): { host: string; port: number } => {
  const u = new URL(DATABASE_URL);
  return { host: u.hostname, port: Number(u.port || 5432) };
};

/** Resolves once a statement of `appName` is running on the server. */
async function runningStatement(admin: pg.Pool, appName: string): Promise<void> {
  for (;;) {
    const { rows } = await admin.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND query LIKE '%pg_sleep%'`, [appName]);
    if (rows.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const SLEEP = sql("SELECT pg_sleep(30)");

describe.skipIf(!reachable)("the PostgreSQL adapter says when the database cannot be reached (D28)", () => {
  let admin: pg.Pool;
  const pools: pg.Pool[] = [];
  const proxies: TcpProxy[] = [];
  const pool = (config: pg.PoolConfig): pg.Pool => {
    const p = new pg.Pool({ connectionString: DATABASE_URL, ...config });
    p.on("error", () => undefined);
    pools.push(p);
    return p;
  };
  const proxy = async (): Promise<TcpProxy> => {
    const p = await startTcpProxy(upstream());
    proxies.push(p);
    return p;
  };

  beforeAll(() => {
    admin = pool({ max: 2 });
  });
  afterAll(async () => {
    for (const p of proxies) await p.close();
    for (const p of pools) await p.end().catch(() => undefined);
  });

  it("calls a closed port 'connection refused'", async () => {
    const closed = await proxy();
    await closed.close();
    const refused = pool({ connectionString: throughProxy(DATABASE_URL, closed) });
    const error = await expectUnavailable(run(refused, sql("SELECT 1")), "connection refused");
    expect(error.code).toBe("ECONNREFUSED");
    await expectUnavailable(transaction(refused, async (client) => run(client, sql("SELECT 1"))), "connection refused");
  });

  it("calls a connection dropped under a statement 'connection lost', and one reset 'connection reset'", async () => {
    for (const [reset, reason] of [[false, "connection lost"], [true, "connection reset"]] as const) {
      const p = await proxy();
      const appName = `rp_d28_drop_${reset}_${process.pid}`;
      const dropped = pool({ connectionString: throughProxy(DATABASE_URL, p), application_name: appName });
      const statement = run(dropped, SLEEP);
      statement.catch(() => undefined);
      await runningStatement(admin, appName);
      await p.close({ reset });
      await expectUnavailable(statement, reason);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [appName]);
    }
  });

  it("calls a backend terminated by an administrator 'administrator shutdown' (57P01), inside a transaction too", async () => {
    const appName = `rp_d28_terminate_${process.pid}`;
    const terminated = pool({ application_name: appName });
    const statement = run(terminated, SLEEP);
    statement.catch(() => undefined);
    await runningStatement(admin, appName);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [appName]);
    expect((await expectUnavailable(statement, "administrator shutdown")).code).toBe("57P01");

    const inside = transaction(terminated, async (client) => {
      await run(client, sql("SELECT 1"));
      return run(client, sql("SELECT pg_terminate_backend(pg_backend_pid())"));
    });
    await expectUnavailable(inside, "administrator shutdown");
    // The pool replaced the broken connection: the next statement runs.
    expect((await run(terminated, sql("SELECT 1 AS one"))).rows).toEqual([{ one: 1 }]);
  });

  it("calls a pool with every connection checked out past its connectionTimeoutMillis 'pool timeout'", async () => {
    const small = pool({ max: 1, connectionTimeoutMillis: 50 });
    const held = await small.connect();
    try {
      await expectUnavailable(run(small, sql("SELECT 1")), "pool timeout");
      await expectUnavailable(transaction(small, async (client) => run(client, sql("SELECT 1"))), "pool timeout");
    } finally {
      held.release();
    }
  });

  it("leaves every other failure as it was: a constraint, a syntax error, a missing table", async () => {
    const schema = uniqueSchema("d28");
    try {
      await run(admin, sql(`CREATE SCHEMA "${schema}"`));
      await run(admin, sql(`CREATE TABLE "${schema}".d28 (id int PRIMARY KEY)`));
      await run(admin, sql(`INSERT INTO "${schema}".d28 VALUES (1)`));
      for (const statement of [`INSERT INTO "${schema}".d28 VALUES (1)`, "SELEC 1", `SELECT * FROM "${schema}".nope`]) {
        const error = await rejection(run(admin, sql(statement)));
        expect(error).toBeInstanceOf(PostgresStorageError);
        expect(isStorageUnavailableError(error)).toBe(false);
      }
      expect(postgresUnavailable(new Error("Cannot use a pool after calling end on the pool"))).toBeNull();
    } finally {
      await dropSchema(admin, schema);
    }
  });

  it("rejects a storage call with StorageUnavailableError while the database is away, and answers again once it is back", async () => {
    const p = await proxy();
    const schema = uniqueSchema("d28s");
    const through = pool({ connectionString: throughProxy(DATABASE_URL, p), max: 4 });
    const storage = await createPostgresStorage(through, { schema });
    try {
      expect(await storage.organizations.insert({ name: "acme", email: null })).toBe(true);
      await p.close();
      const calls = [() => storage.organizations.get("acme"), () => storage.organizations.insert({ name: "other", email: null }), () => storage.runs.get("run-x")];
      for (const call of calls) expect(isStorageUnavailableError(await rejection(call()))).toBe(true);
      await p.open();
      expect(await storage.organizations.get("acme")).toEqual({ name: "acme", email: null });
      expect(await storage.organizations.get("other")).toBeNull();
    } finally {
      await storage.close();
      await dropSchema(admin, schema);
    }
  });
});
