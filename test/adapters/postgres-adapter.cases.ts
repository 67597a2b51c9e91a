import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import type { Storage } from "../../src/storage/types.js";
import { migrate, MIGRATIONS, type PgMigration } from "../../adapters/postgres/schema.js";
import { at } from "../conformance/fixtures.js";
import { delivery, result, rid, run, runTask, stage, started, workspaceTask } from "../conformance/run-task-fixtures.js";
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
  const open = async (label: string, count: number, schema = schemaFor(label)): Promise<Storage[]> => {
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
      const [a, b] = (await open("orphans", 2)) as [Storage, Storage];
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
}
