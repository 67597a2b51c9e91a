import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { PgPoolClientLike, PgPoolLike, PgQueryConfig } from "../../adapters/postgres/driver.js";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { delivery, result, rid, run, stage, started } from "../../src/testing/conformance/run-task-fixtures.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";

/** One statement as the adapter sent it, with the settings its transaction had set before it. */
interface Sent {
  config: PgQueryConfig;
  settings: string[];
}

/** A pool that records every statement, and the `SET LOCAL`s sent before it on the same client. */
function recordingPool() {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on("error", () => undefined);
  const sent: Sent[] = [];
  const wrapped: PgPoolLike = {
    query(config: PgQueryConfig) {
      sent.push({ config, settings: [] });
      return pool.query(config);
    },
    async connect() {
      const client = await pool.connect();
      let settings: string[] = [];
      const recording: PgPoolClientLike = Object.create(client);
      recording.query = (config: PgQueryConfig) => {
        if (/^(BEGIN|COMMIT|ROLLBACK)/.test(config.text)) settings = [];
        else if (config.text.startsWith("SET LOCAL")) settings.push(config.text);
        else sent.push({ config, settings: [...settings] });
        return client.query(config);
      };
      return recording;
    },
    on: (event, listener) => pool.on(event, listener),
    removeListener: (event, listener) => pool.removeListener(event, listener),
    end: () => pool.end(),
  };
  return { pool, wrapped, sent };
}

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; Plans?: PlanNode[] };
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/** The plan PostgreSQL chooses for a recorded statement, in its transaction's settings; runs nothing. */
async function planOf(pool: pg.Pool, { config, settings }: Sent): Promise<PlanNode[]> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    for (const setting of settings) await client.query(setting);
    const explained = await client.query({ text: `EXPLAIN (FORMAT JSON) ${config.text}`, values: config.values });
    return nodesOf((explained.rows[0] as { "QUERY PLAN": [{ Plan: PlanNode }] })["QUERY PLAN"][0].Plan);
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}

const onDeliveries = (nodes: PlanNode[]) => nodes.filter((n) => n["Relation Name"] === "task_deliveries" && n["Node Type"] !== "ModifyTable");

if (await postgresReachable("postgres outbox plans")) {
  describe("postgres adapter: the outbox's claim and settle on a table the planner has no statistics for", () => {
    const schema = uniqueSchema("plans");
    const { pool, wrapped, sent } = recordingPool();
    afterAll(async () => {
      await dropSchema(pool, schema);
      await pool.end();
    });

    it("claim walks the due-order index, and stage start and settle find rows by key, instead of reading every open row", async () => {
      const storage = await createPostgresStorage(wrapped, { schema });
      // 1,000 open rows, due at once, in a schema created seconds ago (never analyzed), as after a burst.
      for (let n = 0; n < 100; n++) {
        const st = stage({ id: rid("ts", n), runId: rid("run", n) });
        const results = Array.from({ length: 10 }, (_, i) => result({ id: rid(`taskrs${n}`, i), stageId: st.id, runId: st.runId, position: i }));
        const writes = results.map((r, i) => ({ next: { ...r, accessTokenDigest: `digest-${n}-${i}`, version: 2 }, expected: { statuses: ["pending" as const], version: 1 } }));
        const rows = results.map((r, i) => delivery({ id: rid(`dlv${n}`, i), taskResultId: r.id, stageId: st.id, runId: st.runId }));
        await storage.runs.create(run({ id: st.runId }), [st], results);
        await storage.taskStages.start(started(st), { statuses: ["pending"], version: 1 }, writes, rows);
      }
      // decision D57: a stage start finds its results by key, whatever the planner guesses of its JSON input.
      const startPlan = await planOf(pool, sent.findLast((s) => s.config.text.includes("WITH s AS MATERIALIZED"))!);
      expect(startPlan.filter((n) => n["Relation Name"] === "task_results" && n["Node Type"] !== "ModifyTable").map((n) => `${n["Node Type"]} ${n["Index Name"] ?? ""}`)).toStrictEqual([
        "Index Scan task_results_pkey",
        "Index Scan task_results_pkey",
      ]);
      sent.length = 0;

      const claimed = await storage.taskDeliveries.claim({ now: "2100-01-01T00:00:00.000Z", owner: "host-a", leaseMs: 60_000, limit: 50, window: { ms: 600_000, maxMs: null } });
      const at = "2100-01-01T00:00:01.000Z";
      const fields = { attempt: 1, closedAt: at, deliveredAt: at, lastError: null };
      const settled = await storage.taskDeliveries.settle(claimed.map((c) => ({ id: c.row.id, fencingToken: c.row.fencingToken, type: "close", fields })));

      expect(claimed).toHaveLength(50);
      expect(settled.every((s) => s.written)).toBe(true);
      const claimPlan = await planOf(pool, sent.find((s) => s.config.text.includes("WITH picked AS"))!);
      const settlePlan = await planOf(pool, sent.find((s) => s.config.text.includes("WITH written AS"))!);
      expect(onDeliveries(claimPlan).map((n) => `${n["Node Type"]} ${n["Index Name"] ?? ""}`)).toStrictEqual([
        "Index Scan task_deliveries_open_by_due",
        "Index Scan task_deliveries_pkey",
      ]);
      // The rows written, and (decision D58) the rows of hand-outs, only checked: both by key.
      expect(onDeliveries(settlePlan).map((n) => `${n["Node Type"]} ${n["Index Name"] ?? ""}`)).toStrictEqual(["Index Scan task_deliveries_pkey", "Index Scan task_deliveries_pkey"]);
      await storage.close();
    });

    it("the sweeper's search for open results past their deadline can walk the index of exactly those", async () => {
      const storage = await createPostgresStorage(wrapped, { schema });
      sent.length = 0;

      await storage.taskResults.listPastDeadline("2100-01-01T00:00:00.000Z", 100);

      const search = sent.find((s) => s.config.text.includes("deadline_at <="))!;
      // Full scans ruled out: this checks that the query implies the partial index's predicate.
      const plan = await planOf(pool, { ...search, settings: ["SET LOCAL enable_seqscan = off", "SET LOCAL enable_bitmapscan = off"] });
      expect(plan.filter((n) => n["Relation Name"] === "task_results").map((n) => n["Index Name"])).toStrictEqual(["task_results_open_by_deadline"]);
      await storage.close();
    });
  });
}
