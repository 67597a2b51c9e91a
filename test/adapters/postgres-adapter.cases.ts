import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPostgresStorage, type PostgresStorage } from "../../adapters/postgres/index.js";
import { migrate, MIGRATIONS, type PgMigration } from "../../adapters/postgres/schema.js";
import { at } from "../../src/testing/conformance/fixtures.js";
import { delivery, result, rid, run, runTask, stage, started, workspaceTask } from "../../src/testing/conformance/run-task-fixtures.js";
import { DELIVERIES, RUNS, TASK_RESULTS, TASK_STAGES, toDeliveryRow, toRunRow, toTaskResultRow, toTaskStageRow } from "../../adapters/sql/run-task-rows.js";
import { DATABASE_URL, dropSchema, uniqueSchema } from "../helpers/postgres.js";

/**
 * What the conformance suite cannot show with one pool: several pools (each standing in for a
 * process) starting, migrating and racing on one database, and connections the server drops.
 */
export function describePostgresAdapterCases(): void {
  const pools: pg.Pool[] = [];
  const schemas: string[] = [];
  const poolOf = (max = 2, application_name?: string): pg.Pool => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max, application_name });
    pools.push(pool);
    return pool;
  };
  const schemaFor = (label: string): string => {
    const schema = uniqueSchema(label);
    schemas.push(schema);
    return schema;
  };
  const versions = async (pool: pg.Pool, schema: string) =>
    (await pool.query(`SELECT version, name FROM "${schema}".runplane_schema_version ORDER BY version`)).rows;

  afterEach(async () => {
    const admin = poolOf(1);
    for (const schema of schemas.splice(0)) await dropSchema(admin, schema);
    for (const pool of pools.splice(0)) await pool.end();
  });

  describe("postgres adapter: migrations", () => {
    it("applies every step exactly once when 4 pools start the adapter together", async () => {
      const schema = schemaFor("migrate");
      const racers = [poolOf(), poolOf(), poolOf(), poolOf()];
      const stores = await Promise.all(racers.map((pool) => createPostgresStorage(pool, { schema })));
      expect(await versions(racers[0]!, schema)).toStrictEqual(MIGRATIONS.map((m, i) => ({ version: i + 1, name: m.name })));
      await Promise.all(stores.map((s) => s.close()));
    });

    it("runs a step that is not idempotent once across 4 racing pools: the advisory lock serializes them", async () => {
      const schema = schemaFor("serial");
      const steps: PgMigration[] = [
        { name: "0001-log", up: (q) => `CREATE TABLE ${q}log (n integer)` },
        { name: "0002-append", up: (q) => `SELECT pg_sleep(0.05); INSERT INTO ${q}log VALUES (1)` },
      ];
      const racers = [poolOf(), poolOf(), poolOf(), poolOf()];
      await Promise.all(racers.map((pool) => migrate(pool, schema, steps)));
      expect((await racers[0]!.query(`SELECT count(*)::int AS n FROM "${schema}".log`)).rows).toStrictEqual([{ n: 1 }]);
      expect((await versions(racers[0]!, schema)).map((r) => r.version)).toStrictEqual([1, 2]);
    });

    it("refuses to start on a database that a newer runplane migrated", async () => {
      const schema = schemaFor("newer");
      const pool = poolOf();
      await (await createPostgresStorage(pool, { schema })).close();
      const known = MIGRATIONS.length;
      await pool.query(`INSERT INTO "${schema}".runplane_schema_version (version, name) VALUES ($1, 'from-the-future')`, [known + 1]);
      await expect(createPostgresStorage(pool, { schema })).rejects.toThrow(
        `database schema is version ${known + 1}, this runplane knows ${known}: upgrade runplane`,
      );
    });

    it("rolls a failing step back completely, version included", async () => {
      const schema = schemaFor("broken");
      const pool = poolOf();
      const steps: PgMigration[] = [
        { name: "0001-ok", up: (q) => `CREATE TABLE ${q}ok (n integer)` },
        { name: "0002-broken", up: (q) => `CREATE TABLE ${q}half (n integer); SELECT * FROM ${q}nowhere` },
      ];
      await expect(migrate(pool, schema, steps)).rejects.toThrow(/migration 0002-broken failed and was rolled back/);
      expect((await versions(pool, schema)).map((r) => r.version)).toStrictEqual([1]);
      expect((await pool.query(`SELECT to_regclass($1) AS half`, [`"${schema}".half`])).rows).toStrictEqual([{ half: null }]);
    });

    it("brings results and outbox rows stored before 0009-outbox-hot-updates along: the sweeper still finds exactly the open ones past their deadline", async () => {
      const schema = schemaFor("upgrade");
      const pool = poolOf();
      await migrate(pool, schema, MIGRATIONS.slice(0, MIGRATIONS.findIndex((m) => m.name === "0009-outbox-hot-updates")));
      const rows = <Row extends object>(table: { table: string; columns: readonly (keyof Row & string)[] }, values: Row[]) =>
        pool.query(`INSERT INTO "${schema}".${table.table} (${table.columns.join(", ")})
          SELECT ${table.columns.join(", ")} FROM json_populate_recordset(NULL::"${schema}".${table.table}, $1)`, [JSON.stringify(values)]);
      const past = at(-60_000);
      // Results as stored then: their agent pool came later (the `agents` migration).
      const results = [
        result({ id: rid("taskrs", 1), status: "pending", deadlineAt: past, agentPoolId: null }),
        result({ id: rid("taskrs", 2), status: "passed", deadlineAt: past, position: 1, agentPoolId: null }),
        result({ id: rid("taskrs", 3), status: "running", deadlineAt: at(600_000), position: 2, agentPoolId: null }),
      ];
      const row = delivery({ taskResultId: results[0]!.id });
      // A run row as stored then: its apply id came later (the `run-comments-and-applies` migration).
      await rows({ ...RUNS, columns: RUNS.columns.filter((c) => c !== "apply_id") }, [toRunRow(run())]);
      await rows(TASK_STAGES, [toTaskStageRow(stage())]);
      await rows({ ...TASK_RESULTS, columns: TASK_RESULTS.columns.filter((c) => c !== "agent_pool_id") }, results.map(toTaskResultRow));
      // An outbox row as stored then: its agent pool came later (the `delivery-pools` migration).
      await rows({ ...DELIVERIES, columns: DELIVERIES.columns.filter((c) => c !== "agent_pool_id") }, [toDeliveryRow(row)]);
      await pool.query(`INSERT INTO "${schema}".task_delivery_payloads (delivery_id, payload) VALUES ($1, $2)`, [row.id, row.payload]);

      const storage = await createPostgresStorage(pool, { schema });

      expect(await storage.taskResults.listPastDeadline(at(0), 10)).toStrictEqual([results[0]]);
      expect(await storage.taskResults.listByStage(stage().id)).toStrictEqual(results);
      expect(await storage.taskDeliveries.get(row.id)).toStrictEqual(row);
      await storage.close();
    });

    it("accepts only a plain lower-case identifier as schema", async () => {
      await expect(createPostgresStorage(poolOf(), { schema: 'x"; DROP TABLE y; --' })).rejects.toThrow(TypeError);
      await expect(createPostgresStorage(poolOf(), { schema: "Mixed" })).rejects.toThrow(TypeError);
    });
  });

  describe("postgres adapter: connections", () => {
    it("survives the server terminating an idle connection, logging no secret, and reconnects", async () => {
      const schema = schemaFor("idle");
      const pool = poolOf(1);
      const storage = await createPostgresStorage(pool, { schema });
      const { pid } = (await pool.query("SELECT pg_backend_pid() AS pid")).rows[0] as { pid: number };
      const warned = new Promise<unknown[]>((resolve) => {
        vi.spyOn(console, "warn").mockImplementationOnce((...args: unknown[]) => resolve(args));
      });
      // No listener of the test's on this pool: without the adapter's, the error would be thrown.
      await poolOf(1).query("SELECT pg_terminate_backend($1)", [pid]);
      const logged = JSON.stringify(await warned);
      vi.restoreAllMocks();
      expect(logged).toContain("57P01");
      expect(logged).not.toContain(DATABASE_URL);
      expect(await storage.organizations.get("none")).toBeNull();
      await storage.close();
    });
  });

  /** `count` stores on one new schema, each on its own pool: the first migrates, the rest race to open. */
  const open = async (label: string, count: number, schema = schemaFor(label)): Promise<PostgresStorage[]> => {
    const first = await createPostgresStorage(poolOf(3), { schema });
    const rest = await Promise.all(Array.from({ length: count - 1 }, () => createPostgresStorage(poolOf(3), { schema })));
    return [first, ...rest];
  };

  describe("postgres adapter: races across pools", () => {
    it("hands each delivery to exactly one of 4 pools claiming together, and opens each window once", async () => {
      const stores = await open("claims", 4);
      const count = 120;
      const results = Array.from({ length: count }, (_, i) => result({ id: rid("taskrs", i), position: i }));
      const rows = results.map((r, i) => delivery({ id: rid("dlv", i), taskResultId: r.id, dueAt: at(i % 7) }));
      const writes = results.map((r, i) => ({ next: { ...r, accessTokenDigest: `digest-${i}`, version: 2 }, expected: { statuses: ["pending" as const], version: 1 } }));
      const s = stores[0]!;
      await s.runs.create(run(), [stage()], results);
      expect(await s.taskStages.start(started(stage()), { statuses: ["pending"], version: 1 }, writes, rows)).not.toBeNull();

      const claimed: { id: string; owner: string }[] = [];
      await Promise.all(
        stores.map(async (store, i) => {
          for (let idle = 0; claimed.length < count && idle < 50; ) {
            const got = await store.taskDeliveries.claim({ now: at(10), owner: `w${i}`, leaseMs: 30_000, limit: 7, window: { ms: 600_000, maxMs: null } });
            idle = got.length === 0 ? idle + 1 : 0;
            for (const c of got) claimed.push({ id: c.row.id, owner: `w${i}` });
          }
        }),
      );
      expect(new Set(claimed.map((c) => c.id)).size).toBe(claimed.length);
      expect(claimed.map((c) => c.id).sort()).toStrictEqual(rows.map((r) => r.id).sort());
      for (const c of claimed.slice(0, 20)) expect((await s.taskDeliveries.get(c.id))?.leaseOwner).toBe(c.owner);
      const stored = await s.taskResults.listByStage(stage().id);
      expect(new Set(stored.map((r) => `${r.version} ${r.deadlineAt}`))).toStrictEqual(new Set([`3 ${new Date(Date.parse(at(10)) + 600_000).toISOString()}`]));
      await Promise.all(stores.map((store) => store.close()));
    });

    it("never leaves a workspace task behind when its run task is deleted at the same time from another pool", async () => {
      const [a, b] = (await open("orphans", 2)) as [PostgresStorage, PostgresStorage];
      for (let i = 0; i < 20; i++) {
        const task = runTask({ id: rid("task", i), name: `t${i}` });
        await a.runTasks.insert(task);
        const attach = workspaceTask({ id: rid("wstask", i), taskId: task.id });
        const [inserted, deleted] = await Promise.all([a.workspaceTasks.insert(attach), b.runTasks.delete(task.id)]);
        expect(deleted).toBe(true);
        expect([true, false]).toContain(inserted.ok);
        expect(await a.workspaceTasks.get(attach.id)).toBeNull();
      }
      await Promise.all([a.close(), b.close()]);
    });
  });

  describe("postgres adapter: wake-ups (LISTEN/NOTIFY)", () => {
    const PENDING = { statuses: ["pending" as const], version: 1 };
    /** Counts wake-ups; `reached(n)` resolves at the n-th, and fails the case after 5 s without it. */
    const wakeCounter = () => {
      let count = 0;
      const waiters: { n: number; resolve: () => void }[] = [];
      return {
        get count() {
          return count;
        },
        wake(): void {
          count++;
          for (const w of waiters.filter((w) => count >= w.n)) (waiters.splice(waiters.indexOf(w), 1), w.resolve());
        },
        reached(n: number): Promise<void> {
          if (count >= n) return Promise.resolve();
          return new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`waited 5 s for ${n} wake-ups, got ${count}`)), 5_000);
            waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
          });
        },
      };
    };
    /**
     * Asserts that exactly `n` wake-ups were heard for what was done so far, without sleeping: a
     * marker (a status change of another origin, with a unique time) sent now reaches `storage`'s
     * one listening connection after every wake-up committed before it (PostgreSQL delivers
     * notifications in commit order), so once the marker is heard the count is final.
     */
    let markers = 0;
    const heardExactly = async (storage: PostgresStorage, wakes: ReturnType<typeof wakeCounter>, schema: string, n: number): Promise<void> => {
      const token = `marker-${++markers}`;
      let heard: () => void = () => undefined;
      const marker = new Promise<void>((resolve, reject) => {
        heard = resolve;
        setTimeout(() => reject(new Error("the marker notification never arrived within 5 s")), 5_000).unref();
      });
      const stop = await storage.changes.subscribe((change) => void (change.at === token && heard()));
      const ids = { stageId: "m", runId: "m", workspaceId: "m", stage: "m" };
      const payload = JSON.stringify({ schema, origin: "marker", kind: "stage", ...ids, from: "pending", to: "running", at: token });
      await poolOf(1).query("SELECT pg_notify('runplane_events', $1)", [payload]);
      await marker;
      await stop();
      expect(wakes.count).toBe(n);
    };
    const enqueue = async (s: PostgresStorage, n: number) => {
      const r = result({ id: rid("taskrs", n), stageId: rid("ts", n) });
      await s.runs.create(run({ id: rid("run", n) }), [stage({ id: rid("ts", n), runId: rid("run", n) })], [r]);
      const row = delivery({ id: rid("dlv", n), taskResultId: r.id, stageId: rid("ts", n), runId: rid("run", n) });
      const started_ = started(stage({ id: rid("ts", n), runId: rid("run", n) }));
      return { started: started_, write: { next: { ...r, version: 2 }, expected: PENDING }, row };
    };

    it("wakes a listener on another pool after a stage start or a retry commits, never for a rollback or a close", async () => {
      const schema = schemaFor("wake");
      const [a, b] = (await open("wake", 2, schema)) as [PostgresStorage, PostgresStorage];
      const wakes = wakeCounter();
      const stop = await a.listen(() => wakes.wake());
      const one = await enqueue(b, 1);
      expect(await b.taskStages.start(one.started, { statuses: ["pending"], version: 9 }, [one.write], [one.row])).toBeNull();
      await heardExactly(a, wakes, schema, 0); // the rolled-back start woke nobody
      expect(await b.taskStages.start(one.started, PENDING, [one.write], [one.row])).not.toBeNull();
      await wakes.reached(1);

      const claim = () => b.taskDeliveries.claim({ now: at(10), owner: "w", leaseMs: 30_000, limit: 5, window: { ms: 60_000, maxMs: null } });
      const [held] = await claim();
      await b.taskDeliveries.settle([{ id: one.row.id, fencingToken: held!.row.fencingToken, type: "retry", fields: { attempt: 1, dueAt: at(11), lastError: "503" } }]);
      await wakes.reached(2);
      const [again] = await b.taskDeliveries.claim({ now: at(12), owner: "w", leaseMs: 30_000, limit: 5, window: { ms: 60_000, maxMs: null } });
      const fields = { attempt: 2, closedAt: at(12), deliveredAt: at(12), lastError: null };
      expect(await b.taskDeliveries.settle([{ id: one.row.id, fencingToken: again!.row.fencingToken, type: "close", fields }])).toStrictEqual([{ written: true, result: false }]);
      await heardExactly(a, wakes, schema, 2); // the close woke nobody
      await stop();
      await Promise.all([a.close(), b.close()]);
    });

    it("wakes a listener on another pool when a retrying result's next attempt is made due now (D31), not when it is refused", async () => {
      const schema = schemaFor("expedite");
      const [a, b] = (await open("expedite", 2, schema)) as [PostgresStorage, PostgresStorage];
      const one = await enqueue(b, 1);
      await b.taskStages.start(one.started, PENDING, [one.write], [one.row]);
      const [held] = await b.taskDeliveries.claim({ now: at(10), owner: "w", leaseMs: 30_000, limit: 5, window: { ms: 600_000, maxMs: null } });
      await b.taskDeliveries.settle([{ id: one.row.id, fencingToken: held!.row.fencingToken, type: "retry", fields: { attempt: 1, dueAt: at(100), lastError: "503" } }]);
      const wakes = wakeCounter();
      const stop = await a.listen(() => wakes.wake());
      expect(await b.taskDeliveries.expedite(rid("taskrs", 9), at(20))).toStrictEqual({ ok: false, reason: "not-retrying" });
      await heardExactly(a, wakes, schema, 0); // the refused expedite woke nobody
      expect(await b.taskDeliveries.expedite(one.row.taskResultId, at(20))).toStrictEqual({ ok: true });
      await wakes.reached(1);
      await stop();
      await Promise.all([a.close(), b.close()]);
    });

    it("hears only its own schema", async () => {
      const mine = schemaFor("mine");
      const [a] = (await open("mine", 1, mine)) as [PostgresStorage];
      const [other] = (await open("theirs", 1)) as [PostgresStorage];
      const wakes = wakeCounter();
      await a.listen(() => wakes.wake());
      const one = await enqueue(other, 1);
      await other.taskStages.start(one.started, PENDING, [one.write], [one.row]);
      await heardExactly(a, wakes, mine, 0); // the other schema's start did not wake this one
      await Promise.all([a.close(), other.close()]);
    });

    it("reconnects when the server drops the listening connection, wakes once for what it may have missed, and hears later wake-ups", async () => {
      const schema = schemaFor("relisten");
      const name = `rp-listen-${process.pid}-${Date.now()}`;
      const a = await createPostgresStorage(poolOf(2, name), { schema });
      const [b] = (await open("relisten", 1, schema)) as [PostgresStorage];
      const wakes = wakeCounter();
      await a.listen(() => wakes.wake());
      const admin = poolOf(1);
      const killed = await admin.query(
        "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'",
        [name],
      );
      expect(killed.rows).toStrictEqual([{ ok: true }]);
      await wakes.reached(1);
      const one = await enqueue(b, 1);
      await b.taskStages.start(one.started, PENDING, [one.write], [one.row]);
      await wakes.reached(2);
      await Promise.all([a.close(), b.close()]);
    });
  });
}
