import { describe, expect, it } from "vitest";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { migrate, MIGRATIONS } from "../../adapters/sqlite/schema.js";
import { TASK_DELIVERY_SQL } from "../../adapters/sqlite/task-deliveries.js";
import { TASK_STAGE_SQL } from "../../adapters/sqlite/task-stages.js";
import { at } from "../../src/testing/conformance/fixtures.js";
import { delivery, result, rid, run, stage, started } from "../../src/testing/conformance/run-task-fixtures.js";
import { queryPlan, useTempSqliteFile } from "../helpers/sqlite-files.js";

// The SQLite side of the outbox (decisions D15, D16): the claim and the sweeper's queries walk
// partial indexes; leases are checked in the database, so a second connection never gets a row
// the first one holds; migrations 0007 and 0009 carry existing rows over.

const WINDOW = { ms: 600_000, maxMs: null };

describe("sqlite outbox", () => {
  const files = useTempSqliteFile("runplane-outbox-");

  it("claims and sweeps through partial indexes, never sorting or scanning a table", () => {
    const db = files.connect();
    createSqliteStorage(db);
    const cases: [string, string, unknown][] = [
      [TASK_DELIVERY_SQL.claim, "task_deliveries_open_by_due", { now: at(0), owner: "o", lease_expires_at: at(30), limit: 8 }],
      [TASK_STAGE_SQL.resultsPastDeadline, "task_results_open_by_deadline", { now: at(0), limit: 100 }],
      [TASK_STAGE_SQL.stagesUnsettled, "task_stages_running", { limit: 100 }],
    ];
    for (const [sql, index, params] of cases) {
      const plan = queryPlan(db, sql, params);
      expect(plan, sql).toContain(index);
      expect(plan, sql).not.toContain("TEMP B-TREE");
      expect(plan, sql).not.toMatch(/SCAN (task_deliveries|task_results)\b(?! USING)/);
    }
  });

  it("finds each row of a batch statement by its key, never scanning a table (D57)", () => {
    const db = files.connect();
    createSqliteStorage(db);
    const nulls = (n: number): null[] => Array<null>(n).fill(null);
    const cases: [string, string, string, unknown][] = [
      [TASK_DELIVERY_SQL.settleRows, "d", "sqlite_autoindex_task_deliveries_1", nulls(8)],
      [TASK_DELIVERY_SQL.advanceResults, "r", "sqlite_autoindex_task_results_1", nulls(8)],
      [TASK_STAGE_SQL.resultsStart, "r", "sqlite_autoindex_task_results_1", nulls(10)],
      [TASK_DELIVERY_SQL.openWindows, "r", "sqlite_autoindex_task_results_1", { ids: "[]", now: at(0), deadline_at: at(1), deadline_max_at: null }],
    ];
    for (const [sql, alias, key, params] of cases) {
      const plan = queryPlan(db, sql, params);
      expect(plan, sql).toContain(`SEARCH ${alias} USING INDEX ${key}`);
      expect(plan, sql).not.toMatch(/SCAN (d|r|task_deliveries|task_results)\b/);
    }
  });

  it("never hands a row held through one connection to another", async () => {
    const one = createSqliteStorage(files.connect());
    const two = createSqliteStorage(files.connect());
    const results = Array.from({ length: 40 }, (_, i) => result({ id: rid("taskrs", i + 1), position: i }));
    await one.runs.create(run(), [stage()], results);
    const writes = results.map((r, i) => ({ next: { ...r, accessTokenDigest: `d${i}`, version: 2 }, expected: { statuses: ["pending"] as const, version: 1 } }));
    const rows = results.map((r, i) => delivery({ id: rid("dlv", i + 1), taskResultId: r.id }));
    await one.taskStages.start(started(stage()), { statuses: ["pending"], version: 1 }, writes, rows);

    const held = new Map<string, string>();
    for (let round = 0; round < 10; round++) {
      const claims = await Promise.all([one, two].map((s, i) => s.taskDeliveries.claim({ now: at(10), owner: `c${i}`, leaseMs: 60_000, limit: 3, window: WINDOW })));
      for (const [i, claimed] of claims.entries()) {
        for (const { row } of claimed) {
          expect(held.has(row.id), row.id).toBe(false);
          held.set(row.id, `c${i}`);
        }
      }
    }
    expect(held.size).toBe(40);
    expect(new Set(held.values())).toStrictEqual(new Set(["c0", "c1"]));
    const [first] = rows;
    const stored = await two.taskDeliveries.get(first!.id);
    const release = (fencingToken: number) => one.taskDeliveries.settle([{ id: first!.id, fencingToken, type: "release" }]);
    expect(await release(stored!.fencingToken - 1)).toStrictEqual([{ written: false, result: false }]);
    expect(await release(stored!.fencingToken)).toStrictEqual([{ written: true, result: false }]);
  });

  it("carries rows of a database from before migration 0007 over: delivered rows are closed, payloads kept", async () => {
    const db = files.connect();
    migrate(db, MIGRATIONS.slice(0, 6));
    const insert = db.prepare(`INSERT INTO task_deliveries (id, task_result_id, stage_id, run_id, task_id, stage, url, attempt,
      due_at, lease_owner, lease_expires_at, fencing_token, payload, created_at, delivered_at)
      VALUES (?, 'taskrs-1', 'ts-1', 'run-1', 'task-1', 'post_plan', 'https://x.example/', 1, ?, NULL, NULL, 1, 'sealed', ?, ?)`);
    insert.run("dlv-done", at(1), at(1), at(2));
    insert.run("dlv-open", at(1), at(1), null);
    const storage = createSqliteStorage(db);
    expect(await storage.taskDeliveries.get("dlv-done")).toMatchObject({ closedAt: at(2), deliveredAt: at(2), lastError: null, payload: "sealed" });
    expect(await storage.taskDeliveries.get("dlv-open")).toMatchObject({ closedAt: null, deliveredAt: null, lastError: null });
    const claimed = await storage.taskDeliveries.claim({ now: at(5), owner: "o", leaseMs: 1_000, limit: 10, window: WINDOW });
    expect(claimed.map((c) => [c.row.id, c.row.payload, c.result, c.task])).toStrictEqual([["dlv-open", "sealed", null, null]]);
  });

  it("keeps the payload out of the rows claims and settles rewrite, and writes only the columns a step changes", () => {
    const db = files.connect();
    createSqliteStorage(db);
    const columns = (db.prepare("SELECT name FROM pragma_table_info('task_deliveries')").all() as { name: string }[]).map((c) => c.name);
    expect(columns).not.toContain("payload");
    // The claim, and the settle batch's one statement for closes, retries and releases (D57).
    for (const sql of [TASK_DELIVERY_SQL.claim, TASK_DELIVERY_SQL.settleRows]) {
      const set = /SET\s([\s\S]*?)\s(WHERE|FROM)\s/.exec(sql)![1]!;
      expect(set).not.toMatch(/payload|task_result_id|stage_id|run_id|url|created_at/);
    }
    expect(/SET\s([\s\S]*?)\sFROM\s/.exec(TASK_DELIVERY_SQL.advanceResults)![1]!.match(/\w+ =/g)).toStrictEqual(["status =", "status_timestamps =", "version =", "updated_at ="]);
  });
});
