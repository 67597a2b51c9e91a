import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { groupedTx, type SqliteDatabase } from "../../adapters/sqlite/driver.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { useTempSqliteFile } from "../helpers/sqlite-files.js";
import { result, rid, run, stage, started } from "../../src/testing/conformance/run-task-fixtures.js";

/** A connection that counts the transactions it begins (savepoints inside one are not counted). */
function counted(db: Database.Database): SqliteDatabase & { begun: number } {
  const wrapper = {
    begun: 0,
    get open() {
      return db.open;
    },
    get inTransaction() {
      return db.inTransaction;
    },
    prepare: (sql: string) => db.prepare(sql),
    exec: (sql: string) => db.exec(sql),
    pragma: (sql: string) => db.pragma(sql),
    function: (name: string, options: { deterministic?: boolean }, fn: (...args: any[]) => unknown) => db.function(name, options, fn),
    close: () => db.close(),
    transaction<A extends unknown[], R>(fn: (...args: A) => R) {
      const tx = db.transaction(fn);
      return {
        deferred: (...args: A) => tx.deferred(...args),
        immediate: (...args: A) => {
          if (!db.inTransaction) wrapper.begun++;
          return tx.immediate(...args);
        },
      };
    },
  };
  return wrapper;
}

describe("sqlite adapter: group commit", () => {
  const files = useTempSqliteFile("runplane-sqlite-group-");
  const setup = () => {
    const raw = files.connect();
    raw.pragma("journal_mode = WAL");
    raw.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
    const db = counted(raw);
    const insert = db.prepare("INSERT INTO t (id, v) VALUES (?, ?)");
    const put = groupedTx(db, (id: number, v: string) => insert.run(id, v).changes);
    return { db, put, rows: () => files.connect().prepare("SELECT id, v FROM t ORDER BY id").all() };
  };

  it("commits the writes asked for in one turn of the event loop in one transaction, in call order", async () => {
    const { db, put, rows } = setup();
    const writes = [put(1, "a"), put(2, "b"), put(3, "c")];
    expect(rows()).toStrictEqual([]);
    expect(await Promise.all(writes)).toStrictEqual([1, 1, 1]);
    expect(db.begun).toBe(1);
    expect(rows()).toStrictEqual([
      { id: 1, v: "a" },
      { id: 2, v: "b" },
      { id: 3, v: "c" },
    ]);
    await put(4, "d");
    expect(db.begun).toBe(2);
  });

  it("rolls back and rejects only the call that threw; the others of its group commit", async () => {
    const { put, rows } = setup();
    const writes = await Promise.allSettled([put(1, "a"), put(1, "duplicate"), put(2, "b")]);
    expect(writes.map((w) => w.status)).toStrictEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(rows()).toStrictEqual([
      { id: 1, v: "a" },
      { id: 2, v: "b" },
    ]);
  });

  it("rejects every call of a group whose transaction SQLite abandoned, and commits none of them", async () => {
    const { db, put, rows } = setup();
    const abandon = groupedTx(db, () => db.exec("ROLLBACK"));
    const writes = await Promise.allSettled([put(1, "a"), abandon(), put(2, "b")]);
    expect(writes.map((w) => w.status)).toStrictEqual(["rejected", "rejected", "rejected"]);
    expect(rows()).toStrictEqual([]);
    expect(await put(3, "c")).toBe(1);
  });

  it("starts stages and moves results asked for together in one commit each turn", async () => {
    const db = counted(files.connect());
    const storage = createSqliteStorage(db);
    const ids = [1, 2, 3].map((n) => ({ run: rid("run", n), stage: rid("ts", n), result: rid("taskrs", n) }));
    for (const id of ids) {
      await storage.runs.create(run({ id: id.run }), [stage({ id: id.stage, runId: id.run })], [result({ id: id.result, stageId: id.stage, runId: id.run })]);
    }
    const before = db.begun;
    const starts = ids.map((id) => storage.taskStages.start(started(stage({ id: id.stage, runId: id.run })), { statuses: ["pending"], version: 1 }, [], []));
    expect((await Promise.all(starts)).every((s) => s !== null)).toBe(true);
    const passed = (id: string) => ({ ...result({ id, stageId: id.replace("taskrs", "ts"), runId: id.replace("taskrs", "run") }), status: "passed" as const, version: 2 });
    const moves = ids.map((id) => storage.taskResults.transition(id.result, { statuses: ["pending"], version: 1 }, passed(id.result)));
    expect((await Promise.all(moves)).every((r) => r !== null)).toBe(true);
    expect(db.begun - before).toBe(2);
  });
});
