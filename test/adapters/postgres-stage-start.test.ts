import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { countingPool as countStatementsOf } from "../../adapters/postgres/statement-count.js";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { delivery, result, rid, run, stage, started } from "../../src/testing/conformance/run-task-fixtures.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";

/** A pool that counts the statements that start stages, and those that read runs (decision D56's counter). */
function countingPool() {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on("error", () => undefined);
  const { pool: wrapped, count } = countStatementsOf(pool);
  const texts = (count.texts = new Map<string, number>());
  const matching = (pattern: RegExp): number => [...texts].reduce((n, [text, times]) => n + (pattern.test(text) ? times : 0), 0);
  // Each reads as the statements matching its pattern since it was last set (to 0).
  const since = (pattern: RegExp) => {
    let base = 0;
    return { get: () => matching(pattern) - base, set: (value: number) => void (base = matching(pattern) - value), enumerable: true };
  };
  const counted = Object.defineProperties({} as { starts: number; runReads: number; revisionReads: number }, {
    starts: since(/UPDATE \S+task_stages AS st SET/),
    runReads: since(/^SELECT .* FROM \S+\.runs WHERE id = ANY/s),
    revisionReads: since(/FROM \S+\.revisions WHERE/),
  });
  return { pool, wrapped, counted };
}

/** Stage `n` of run `n`, with `tasks` pending results, and what starting it writes. */
function startOf(n: number, tasks: number) {
  const st = stage({ id: rid("ts", n), runId: rid("run", n) });
  const results = Array.from({ length: tasks }, (_, i) => result({ id: rid(`taskrs${n}`, i), stageId: st.id, runId: st.runId, position: i }));
  const writes = results.map((r, i) => ({ next: { ...r, accessTokenDigest: `digest-${n}-${i}`, version: 2 }, expected: { statuses: ["pending" as const], version: 1 } }));
  const rows = results.map((r, i) => delivery({ id: rid(`dlv${n}`, i), taskResultId: r.id, stageId: st.id, runId: st.runId }));
  return { st, results, writes, rows };
}

if (await postgresReachable("postgres stage start")) {
  describe("postgres adapter: stage starts and reads of one turn", () => {
    const schema = uniqueSchema("starts");
    const { pool, wrapped, counted } = countingPool();
    afterAll(async () => {
      await dropSchema(pool, schema);
      await pool.end();
    });

    it("share one statement, and a start whose guard failed writes nothing without undoing the others", async () => {
      const storage = await createPostgresStorage(wrapped, { schema });
      const starts = [startOf(1, 3), startOf(2, 3), startOf(3, 2)];
      for (const s of starts) await storage.runs.create(run({ id: s.st.runId }), [s.st], s.results);
      // Stage 2's second result is no longer as its starter read it.
      const stale = starts[1]!;
      stale.writes[1] = { ...stale.writes[1]!, expected: { statuses: ["pending"], version: 7 } };
      counted.starts = 0;

      const outcomes = await Promise.all(starts.map((s) => storage.taskStages.start(started(s.st), { statuses: ["pending"], version: 1 }, s.writes, s.rows)));

      expect(counted.starts).toBe(1);
      expect(outcomes).toStrictEqual([started(starts[0]!.st), null, started(starts[2]!.st)]);
      for (const s of [starts[0]!, starts[2]!]) {
        expect(await storage.taskResults.listByStage(s.st.id)).toStrictEqual(s.writes.map((w) => w.next));
        for (const row of s.rows) expect(await storage.taskDeliveries.get(row.id)).toStrictEqual(row);
      }
      expect(await storage.taskStages.get(stale.st.id)).toStrictEqual(stale.st);
      expect(await storage.taskResults.listByStage(stale.st.id)).toStrictEqual(stale.results);
      for (const row of stale.rows) expect(await storage.taskDeliveries.get(row.id)).toBeNull();
      await storage.close();
    });

    it("fails only the start whose write fails, and still starts the others of its turn", async () => {
      const storage = await createPostgresStorage(wrapped, { schema });
      const starts = [startOf(8, 2), startOf(9, 2)];
      for (const s of starts) await storage.runs.create(run({ id: s.st.runId }), [s.st], s.results);
      // Stage 9's first outbox row reuses an id that stage 8's start takes in the same turn.
      starts[1]!.rows[0] = { ...starts[1]!.rows[0]!, id: starts[0]!.rows[0]!.id };

      const outcomes = await Promise.allSettled(starts.map((s) => storage.taskStages.start(started(s.st), { statuses: ["pending"], version: 1 }, s.writes, s.rows)));

      expect(outcomes[0]).toStrictEqual({ status: "fulfilled", value: started(starts[0]!.st) });
      expect(outcomes[1]?.status).toBe("rejected");
      expect(await storage.taskStages.get(starts[1]!.st.id)).toStrictEqual(starts[1]!.st);
      expect(await storage.taskDeliveries.get(starts[0]!.rows[1]!.id)).toStrictEqual(starts[0]!.rows[1]);
      await storage.close();
    });

    it("reads the runs asked for together in one statement, each caller getting its own", async () => {
      const storage = await createPostgresStorage(wrapped, { schema });
      for (const n of [5, 6]) await storage.runs.create(run({ id: rid("run", n), message: `run ${n}` }), [], []);
      counted.runReads = 0;

      const read = await Promise.all([5, 6, 7, 5].map((n) => storage.runs.get(rid("run", n))));

      expect(counted.runReads).toBe(1);
      expect(read.map((r) => r?.message ?? null)).toStrictEqual(["run 5", "run 6", null, "run 5"]);
      await storage.close();
    });

    it("lets one of two starts of the same stage in one turn win, each in its own statement", async () => {
      const storage = await createPostgresStorage(wrapped, { schema });
      const a = startOf(4, 2);
      const b = { ...a, writes: a.writes.map((w) => ({ ...w, next: { ...w.next, accessTokenDigest: `${w.next.accessTokenDigest}-b` } })), rows: a.rows.map((r) => ({ ...r, id: `${r.id}-b` })) };
      await storage.runs.create(run({ id: a.st.runId }), [a.st], a.results);
      counted.starts = 0;

      const outcomes = await Promise.all([a, b].map((s) => storage.taskStages.start(started(s.st), { statuses: ["pending"], version: 1 }, s.writes, s.rows)));

      expect(counted.starts).toBe(2);
      expect(outcomes).toStrictEqual([started(a.st), null]);
      expect(await storage.taskDeliveries.listByResult(a.results[0]!.id)).toStrictEqual([a.rows[0]]);
      await storage.close();
    });
  
    it("reads the revision counters of requests arriving in separate callbacks of one event-loop turn in one statement, each after it asked", async () => {
      const storage = await createPostgresStorage(wrapped, { schema });
      const before = await storage.revisions!.read(["directory"]);
      await storage.organizations.insert({ name: "acme", email: null });
      counted.revisionReads = 0;

      // Like requests read from three sockets: each in its own callback of the same turn. Immediates
      // queued together run in one check phase whatever the load; three 0 ms timers need not (one
      // created a millisecond later expires a turn later on a busy machine).
      const read = await Promise.all(
        [["directory"], ["directory", "vars:workspace:ws-1"], ["vars:workspace:ws-1"]].map(
          (scopes) => new Promise<number[]>((resolve, reject) => setImmediate(() => storage.revisions!.read(scopes).then(resolve, reject))),
        ),
      );

      expect(counted.revisionReads).toBe(1);
      expect(read).toStrictEqual([[before[0]! + 1], [before[0]! + 1, 0], [0]]);
      await storage.close();
    });
  });
}
