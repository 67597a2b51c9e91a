import net, { type AddressInfo, type LookupFunction } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStorageError, run, sql, transaction, type PgPoolLike } from "../../adapters/postgres/driver.js";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { postgresUnavailable } from "../../adapters/postgres/unavailable.js";
import { isStorageUnavailableError, StorageUnavailableError } from "../../src/storage/unavailable.js";
import { createTestApp } from "../helpers/app.js";
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

/**
 * A server in the place of PostgreSQL that answers every connection's startup as PgBouncer does
 * when it cannot serve it: a FATAL ErrorResponse of SQLSTATE class 08 (08P01), then it hangs up.
 */
async function refusingPooler(): Promise<{ port: number; close(): Promise<void> }> {
  const field = (type: string, text: string): Buffer => Buffer.from(`${type}${text}\0`);
  const body = Buffer.concat([field("S", "FATAL"), field("V", "FATAL"), field("C", "08P01"), field("M", "no more connections allowed (max_client_conn)"), Buffer.from([0])]);
  const head = Buffer.alloc(5);
  head.write("E", 0);
  head.writeInt32BE(body.length + 4, 1);
  const server = net.createServer((socket) => {
    socket.on("error", () => undefined);
    socket.once("data", () => socket.end(Buffer.concat([head, body])));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Pool options for a database host name with two addresses, 127.0.0.1 and ::1 (what `localhost`
 * is on most hosts), at `port`: Node tries each (autoSelectFamily) and reports one AggregateError.
 */
const twoAddressHost = (port: number): pg.PoolConfig => {
  const lookup: LookupFunction = (_name, _options, callback) =>
    (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [
      { address: "127.0.0.1", family: 4 },
      { address: "::1", family: 6 },
    ]);
  return {
    host: "db.runplane.test",
    port,
    user: "postgres",
    database: "test",
    stream: () => {
      const socket = new net.Socket();
      const connect = socket.connect.bind(socket) as (options: net.TcpSocketConnectOpts) => net.Socket;
      // node-postgres calls connect(port, host); the name resolves through `lookup` instead of the system.
      socket.connect = ((p: number, host: string) => connect({ port: p, host, lookup, autoSelectFamily: true })) as typeof socket.connect;
      return socket;
    },
  };
};

describe("postgresUnavailable: connection failures besides the socket codes (D28)", () => {
  const econnrefused = (address: string) => Object.assign(new Error(`connect ECONNREFUSED ${address}:5432`), { code: "ECONNREFUSED", address });

  it("calls every SQLSTATE of class 08 (connection exception) unavailable, as a pooler in front of the server sends them", () => {
    for (const code of ["08000", "08001", "08003", "08004", "08006", "08007", "08P01"]) {
      const error = postgresUnavailable(Object.assign(new Error("server closed the connection"), { code }));
      expect(error, code).toBeInstanceOf(StorageUnavailableError);
      expect([error?.reason, error?.code]).toStrictEqual(["connection exception", code]);
    }
    // Other classes stay the statement's own failure.
    for (const code of ["22P02", "23505", "42P01", "0800", "080000"]) expect(postgresUnavailable(Object.assign(new Error("x"), { code })), code).toBeNull();
  });

  it("calls an AggregateError of refused addresses 'connection refused', with or without a code of its own", () => {
    const errors = [econnrefused("::1"), econnrefused("127.0.0.1")];
    // Node 20 copies the first error's code onto the aggregate; other producers do not.
    for (const aggregate of [new AggregateError(errors), Object.assign(new AggregateError(errors), { code: "ECONNREFUSED" })]) {
      const error = postgresUnavailable(aggregate);
      expect(error).toBeInstanceOf(StorageUnavailableError);
      expect([error?.reason, error?.code]).toStrictEqual(["connection refused", "ECONNREFUSED"]);
    }
    expect(postgresUnavailable(new AggregateError([]))).toBeNull();
  });

  it("calls a pooler's class 08 refusal 'connection exception' and a name whose addresses all refuse 'connection refused', on real connections", async () => {
    const pooler = await refusingPooler();
    const pools = [
      new pg.Pool({ host: "127.0.0.1", port: pooler.port, user: "postgres", database: "test" }),
      new pg.Pool(twoAddressHost(await closedPort())),
    ];
    for (const p of pools) p.on("error", () => undefined);
    try {
      expect((await expectUnavailable(run(pools[0]!, sql("SELECT 1")), "connection exception")).code).toBe("08P01");
      // What node-postgres hands over for the two-address name is Node's AggregateError itself.
      expect(await rejection(pools[1]!.query("SELECT 1"))).toBeInstanceOf(AggregateError);
      expect((await expectUnavailable(run(pools[1]!, sql("SELECT 1")), "connection refused")).code).toBe("ECONNREFUSED");
    } finally {
      for (const p of pools) await p.end();
      await pooler.close();
    }
  });
});

describe.skipIf(!reachable)("the API over PostgreSQL answers 503 when its connections fail (D28)", () => {
  it("for a pooler's class 08 refusal and for a database name whose addresses all refuse", async () => {
    const live = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    const pooler = await refusingPooler();
    const outages = {
      "a pooler refusing with 08P01": new pg.Pool({ host: "127.0.0.1", port: pooler.port, user: "postgres", database: "test" }),
      "a name whose two addresses refuse": new pg.Pool(twoAddressHost(await closedPort())),
    };
    for (const p of [live, ...Object.values(outages)]) p.on("error", () => undefined);
    // The storage is created and seeded while the database answers; then its statements go to `current`.
    let current: pg.Pool = live;
    const switching: PgPoolLike = {
      query: (config) => current.query(config),
      connect: () => current.connect(),
      on: (event, listener) => live.on(event, listener),
      removeListener: (event, listener) => live.removeListener(event, listener),
      end: () => live.end(),
    };
    const schema = uniqueSchema("d28api");
    const app = await createTestApp({ storage: await createPostgresStorage(switching, { schema }) });
    try {
      expect((await app.call("GET", "/api/v2/workspaces/ws-a/vars")).status).toBe(200);
      for (const [outage, pool] of Object.entries(outages)) {
        current = pool;
        const res = await app.call("GET", "/api/v2/workspaces/ws-a/vars");
        expect([outage, res.status, res.headers.has("retry-after")]).toStrictEqual([outage, 503, true]);
      }
      current = live;
      expect((await app.call("GET", "/api/v2/workspaces/ws-a/vars")).status).toBe(200);
    } finally {
      await app.runplane.close();
      for (const p of Object.values(outages)) await p.end();
      await pooler.close();
      await dropSchema(live, schema);
      await live.end();
    }
  });
});
