import { describe, expect, it } from "vitest";
import { createGroupCommit } from "../../adapters/sqlite/writer-group.js";
import { useTempSqliteFile } from "../helpers/sqlite-files.js";

// The writer thread's group commit (decision D37) alone, on a file of its own tables: every `ok`
// it answers must be durable, and a call that failed must leave nothing (found by a mutation
// audit, issue 42 point 8: neither a success answered for a failed COMMIT nor a failed call's
// writes kept made any test fail).

describe("the writer thread's group commit", () => {
  const files = useTempSqliteFile("runplane-writer-group-");
  const setup = () => {
    const db = files.connect();
    db.pragma("journal_mode = WAL");
    db.pragma("foreign_keys = ON");
    db.exec(`CREATE TABLE parent (id TEXT PRIMARY KEY);
      CREATE TABLE child (id TEXT PRIMARY KEY, parent TEXT NOT NULL REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)`);
    const child = db.prepare("INSERT INTO child (id, parent) VALUES (?, ?)");
    const parent = db.prepare("INSERT INTO parent (id) VALUES (?)");
    const rows = (table: string) => files.connect().prepare(`SELECT id FROM ${table} ORDER BY id`).all();
    return { db, commit: createGroupCommit(db), child, parent, rows };
  };

  it("answers every call of a group whose COMMIT failed with a failure, and stores none of them", async () => {
    const { db, commit, child, parent, rows } = setup();
    // A deferred foreign key is checked at COMMIT: the statements succeed, the COMMIT fails.
    const outcomes = await commit([
      { id: 1, run: async () => parent.run("p1").changes },
      { id: 2, run: async () => child.run("orphan", "no-such-parent").changes },
      { id: 3, run: async () => child.run("c1", "p1").changes },
    ]);
    expect(outcomes.map((o) => o.ok)).toStrictEqual([false, false, false]);
    expect(outcomes.map((o) => (o.ok ? null : o.error.code))).toStrictEqual(Array(3).fill("SQLITE_CONSTRAINT_FOREIGNKEY"));
    expect(db.inTransaction).toBe(false);
    expect(rows("parent")).toStrictEqual([]);
    expect(rows("child")).toStrictEqual([]);
  });

  it("keeps no write of a call that wrote and then threw; the calls around it commit", async () => {
    const { commit, parent, rows } = setup();
    const outcomes = await commit([
      { id: 1, run: async () => parent.run("before").changes },
      {
        id: 2,
        run: async () => {
          parent.run("half-done");
          throw new Error("failed after its first write");
        },
      },
      { id: 3, run: async () => parent.run("after").changes },
    ]);
    expect(outcomes.map((o) => o.ok)).toStrictEqual([true, false, true]);
    expect(rows("parent")).toStrictEqual([{ id: "after" }, { id: "before" }]);
  });
});
