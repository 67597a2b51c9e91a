import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createTestApp, varsBody, type TestApp, type TestResponse } from "../helpers/app.js";
import { createPostgresStorage, type PgPoolClientLike, type PgPoolLike, type PgQueryConfig, type PostgresStorage } from "../../adapters/postgres/index.js";
import { transaction } from "../../adapters/postgres/driver.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";
import type { AgentTokenRecord } from "../../src/schemas/records.js";
import { DATABASE_URL, dropSchema, postgresReachable, resetSchema, uniqueSchema } from "../helpers/postgres.js";

// decision D39: a write answered 503 (or any error) is not and will not be applied. Another session
// holds a table lock past the storage's bound (400 ms); the write answers 503; the lock goes; the
// write must not be found. A statement left queued behind the lock (a client-side timeout that only
// dropped the connection) would commit the moment the lock goes.

const reachable = await postgresReachable("postgres lock timeout");
const TIMEOUT_MS = 400;

describe.skipIf(!reachable)("a write behind a lock held past the bound (D39)", () => {
  const schema = uniqueSchema("lock");
  let pool: pg.Pool;
  let admin: pg.Pool;
  let storage: PostgresStorage;
  let app: TestApp;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    storage = await createPostgresStorage(pool, { schema, timeoutMs: TIMEOUT_MS });
  });
  beforeEach(async () => {
    await resetSchema(admin, schema);
    app = await createTestApp({ storage });
    await app.runplane.directory.agentPools.create({ id: "apool-a", name: "builders", organization: "acme" });
  });
  afterAll(async () => {
    await app?.runplane.close();
    await storage?.close();
    await dropSchema(admin, schema);
    await pool?.end();
    await admin?.end();
  });

  const unavailable = (res: TestResponse): void => {
    expect(res.status, res.text).toBe(503);
    expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
  };

  /**
   * Runs `act` while another session holds `table` in ACCESS EXCLUSIVE mode, then lets the lock go
   * and takes it once more: lock waiters are granted in the order they queued, so when the second
   * lock is held every statement that queued behind the first has finished, committed or not.
   */
  async function behindLock<T>(table: string, act: () => Promise<T>): Promise<T> {
    const holder = await admin.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE "${schema}"."${table}" IN ACCESS EXCLUSIVE MODE`);
      const answer = await act();
      await holder.query("COMMIT");
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE "${schema}"."${table}" IN ACCESS EXCLUSIVE MODE`);
      await holder.query("COMMIT");
      return answer;
    } catch (error) {
      await holder.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      holder.release();
    }
  }
  const count = async (sql: string, values: unknown[] = []): Promise<number> =>
    Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, values)).rows[0]!.n);
  const variables = (key: string) => count(`"${schema}".variables WHERE key = $1`, [key]);
  const createVar = (key: string) => app.call("POST", "/api/v2/workspaces/ws-a/vars", { body: varsBody({ key, value: "v", category: "env" }) });
  const createParameter = (key: string) =>
    app.call("POST", "/api/v2/policy-sets/polset-a/parameters", { body: { data: { type: "vars", attributes: { key, value: "v", category: "policy-set" } } } });

  it("POST /workspaces/:id/vars answered 503 stores nothing once the lock goes", async () => {
    unavailable(await behindLock("variables", () => createVar("late")));
    expect(await variables("late")).toBe(0);
  });

  it("several variable creations at once answered 503 store nothing (one grouped statement)", async () => {
    const answers = await behindLock("variables", () => Promise.all(["g1", "g2", "g3", "g4"].map(createVar)));
    answers.forEach(unavailable);
    expect(await count(`"${schema}".variables`)).toBe(0);
  });

  it("several variable creations at once behind the audit trail's head answered 503 store nothing and record nothing (one grouped transaction, D64)", async () => {
    const events = await count(`"${schema}".audit_events`);
    const answers = await behindLock("audit_heads", () => Promise.all(["h1", "h2", "h3"].map(createVar)));
    answers.forEach(unavailable);
    expect(await count(`"${schema}".variables`)).toBe(0);
    expect(await count(`"${schema}".audit_events`)).toBe(events);
  });

  it("PATCH /workspaces/:id/vars/:id answered 503 changes nothing", async () => {
    const id = (await createVar("kept")).json.data.id as string;
    const patch = () => app.call("PATCH", `/api/v2/workspaces/ws-a/vars/${id}`, { body: varsBody({ key: "renamed" }, { id }) });
    unavailable(await behindLock("variables", patch));
    expect(await variables("kept")).toBe(1);
    expect(await variables("renamed")).toBe(0);
  });

  it("DELETE /workspaces/:id/vars/:id answered 503 deletes nothing", async () => {
    const id = (await createVar("stays")).json.data.id as string;
    unavailable(await behindLock("variables", () => app.call("DELETE", `/api/v2/workspaces/ws-a/vars/${id}`)));
    expect(await variables("stays")).toBe(1);
  });

  it("POST /policy-sets/:id/parameters answered 503 stores nothing", async () => {
    unavailable(await behindLock("variables", () => createParameter("late_param")));
    expect(await variables("late_param")).toBe(0);
  });

  it("DELETE /policy-sets/:id/parameters/:id answered 503 deletes nothing", async () => {
    const id = (await createParameter("param_stays")).json.data.id as string;
    unavailable(await behindLock("variables", () => app.call("DELETE", `/api/v2/policy-sets/polset-a/parameters/${id}`)));
    expect(await variables("param_stays")).toBe(1);
  });

  it("POST /agent-pools/:id/authentication-tokens answered 503 mints no credential", async () => {
    const mint = () => app.call("POST", "/api/v2/agent-pools/apool-a/authentication-tokens", { body: { data: { type: "authentication-tokens", attributes: { description: "late" } } } });
    unavailable(await behindLock("agent_tokens", mint));
    expect(await count(`"${schema}".agent_tokens`)).toBe(0);
  });

  it("DELETE /authentication-tokens/:id answered 503 revokes nothing", async () => {
    const minted = await app.call("POST", "/api/v2/agent-pools/apool-a/authentication-tokens", { body: { data: { type: "authentication-tokens", attributes: { description: "kept" } } } });
    const id = minted.json.data.id as string;
    unavailable(await behindLock("agent_tokens", () => app.call("DELETE", `/api/v2/authentication-tokens/${id}`)));
    expect(await count(`"${schema}".agent_tokens`)).toBe(1);
  });

  it("POST /team-projects answered 503 grants nothing (a transaction)", async () => {
    const grant = () =>
      app.call("POST", "/api/v2/team-projects", {
        body: {
          data: {
            type: "team-projects",
            attributes: { access: "read" },
            relationships: { team: { data: { type: "teams", id: "team-devs" } }, project: { data: { type: "projects", id: "prj-a" } } },
          },
        },
      });
    unavailable(await behindLock("team_projects", grant));
    expect(await count(`"${schema}".team_projects`)).toBe(0);
  });

  it("answers every request of a pool saturated behind a lock within the bound plus the margin (one deadline per request)", async () => {
    // 4 connections; 16 token mints and 16 variable creations at once, each holding or waiting for one.
    const mint = (n: number) => app.call("POST", "/api/v2/agent-pools/apool-a/authentication-tokens", { body: { data: { type: "authentication-tokens", attributes: { description: `t${n}` } } } });
    const timed = async (call: () => Promise<TestResponse>): Promise<[number, number]> => {
      const started = performance.now();
      const res = await call();
      return [res.status, performance.now() - started];
    };
    const answers = await behindLock("agent_tokens", () =>
      behindLock("variables", () => Promise.all(Array.from({ length: 16 }, (_, n) => [timed(() => mint(n)), timed(() => createVar(`sat${n}`))]).flat())),
    );
    expect(new Set(answers.map(([status]) => status))).toStrictEqual(new Set([503]));
    const slowest = Math.max(...answers.map(([, ms]) => ms));
    // The bound, the margin a cancel's confirmation may take (confirmMarginMs: 200 ms here), and
    // 300 ms for two cores shared with the database. A deadline per statement and per connection
    // wait took 1.1-1.5 s here (each read, then the write, waiting its own bound).
    expect(slowest).toBeLessThan(TIMEOUT_MS + 200 + 300);
    expect(await count(`"${schema}".agent_tokens`)).toBe(0);
    expect(await count(`"${schema}".variables`)).toBe(0);
  });

  it("makes the server end a transaction's own lock wait at the deadline (SET LOCAL lock_timeout), not when the lock goes", async () => {
    const waiting = async (): Promise<number> =>
      count(`pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE NOT l.granted AND c.relname = 'teams' AND c.relnamespace = $1::regnamespace`, [schema]);
    const outcome = await behindLock("teams", async () => {
      const answer = await storage.teams.insert({ id: "team-late", name: "late", organization: "acme", visibility: "secret", orgPermissions: [], members: ["user-dev"], owners: false }).then(
        () => "stored",
        (error: Error) => error.name,
      );
      // The connection is closed at the deadline, but PostgreSQL does not notice a closed socket
      // while a statement waits for a lock: only the transaction's own lock_timeout ends the wait.
      await vi.waitFor(async () => expect(await waiting()).toBe(0), { timeout: 1_000, interval: 25 });
      return answer;
    });
    expect(outcome).toBe("StorageUnavailableError");
    expect(await count(`"${schema}".teams WHERE id = 'team-late'`)).toBe(0);
  });

  it("bounds the wait for a connection of an embedder's pool that sets no timeout of its own", async () => {
    const small = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    const bounded = await createPostgresStorage(small, { schema, timeoutMs: TIMEOUT_MS });
    const held = await small.connect();
    try {
      const started = performance.now();
      // Bounded here too: a regression must fail the test, not hang it until vitest's timeout.
      const outcome = await Promise.race([
        bounded.organizations.get("acme").then(
          () => "answered",
          (error: Error) => error.name,
        ),
        new Promise<string>((resolve) => setTimeout(resolve, TIMEOUT_MS + 1_000, "no answer")),
      ]);
      expect(outcome).toBe("StorageUnavailableError");
      expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 500);
    } finally {
      held.release();
      await bounded.close();
      await small.end();
    }
  });

  it("calls a lock wait past lock_timeout (55P03) unavailable: 503, not 500", async () => {
    const error = await behindLock("variables", () =>
      transaction(admin, async (client) => {
        await client.query({ text: "SET LOCAL lock_timeout = 50" });
        await client.query({ text: `SELECT 1 FROM "${schema}".variables` });
      }).then(
        () => null,
        (e: unknown) => e,
      ),
    );
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect(error).toMatchObject({ reason: "lock timeout", code: "55P03" });
  });

  it("a storage call behind the lock rejects as unavailable and stores nothing (the adapter alone)", async () => {
    const at = "2026-01-01T00:00:00.000Z";
    const record = { id: "var-AAAAAAAAAAAAAAAA", ownerKind: "workspace" as const, ownerId: "ws-a", key: "direct", value: "v", description: null, category: "env" as const, hcl: false, sensitive: false, versionId: "v1", createdAt: at, updatedAt: at };
    const outcome = await behindLock("variables", () => storage.variables.insert(record).then(() => "stored", (error: Error) => error.name));
    expect(outcome).toBe("StorageUnavailableError");
    expect(await variables("direct")).toBe(0);
  });
});

describe.skipIf(!reachable)("an embedder's pool whose clients expose no cancel key (D39)", () => {
  const schema = uniqueSchema("lockwrap");
  let pool: pg.Pool;
  let admin: pg.Pool;
  let storage: PostgresStorage;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    // The adapter's structural type only: query, on, removeListener and release, nothing else.
    const wrapped: PgPoolLike = {
      query: (config) => pool.query(config),
      connect: async () => {
        const client = await pool.connect();
        return {
          query: (config: PgQueryConfig) => client.query(config),
          on: ((event: "error", listener: (error: Error) => void) => client.on(event, listener)) as PgPoolClientLike["on"],
          removeListener: (event, listener) => client.removeListener(event, listener),
          release: (error) => client.release(error),
        };
      },
      on: (event, listener) => pool.on(event, listener),
      removeListener: (event, listener) => pool.removeListener(event, listener),
      end: () => pool.end(),
    };
    storage = await createPostgresStorage(wrapped, { schema, timeoutMs: TIMEOUT_MS });
  });
  afterAll(async () => {
    await storage?.close();
    await dropSchema(admin, schema);
    await pool?.end();
    await admin?.end();
  });

  it("runs an autocommit write as a bounded transaction: answered unavailable, never applied", async () => {
    const at = "2026-01-01T00:00:00.000Z";
    const record: AgentTokenRecord = { id: "at-AAAAAAAAAAAAAAAA", agentPoolId: "apool-a", organization: "acme", description: "late", digest: "d".repeat(64), createdAt: at, lastUsedAt: null, createdByType: "users", createdById: "user-owner" };
    const holder = await admin.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE "${schema}".agent_tokens IN ACCESS EXCLUSIVE MODE`);
      const outcome = await storage.agentTokens.insert(record).then(() => "stored", (error: Error) => error.name);
      expect(outcome).toBe("StorageUnavailableError");
      await holder.query("COMMIT");
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE "${schema}".agent_tokens IN ACCESS EXCLUSIVE MODE`);
      await holder.query("COMMIT");
    } finally {
      holder.release();
    }
    expect(Number((await admin.query(`SELECT count(*) AS n FROM "${schema}".agent_tokens`)).rows[0].n)).toBe(0);
  });
});
