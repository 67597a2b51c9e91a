import type Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createAuditRecorder } from "../../adapters/sqlite/audit-record.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { digestOfText } from "../../src/storage/audit-chain.js";
import { auditEvent, walkChain } from "../../src/testing/conformance/audit-fixtures.js";
import { useTempSqliteFile } from "../helpers/sqlite-files.js";

// decision D59 (second change of 2026-11-29): an audited write links its event in JS to the head its
// connection expects, and the insert stores it only when the head is still that one. The guess may
// be stale (another connection appended, a transaction rolled back): the chain must stay linear
// and dense whatever the guess.
describe("SQLite's audit recorder", () => {
  const file = useTempSqliteFile("rp-audit-record-");

  /** A migrated file, then a connection with a recorder of its own and a count of digests made in SQL. */
  function connection() {
    const db: Database.Database = file.connect();
    const counted = { inSql: 0 };
    db.function("rp_audit_digest", { deterministic: true }, (text: unknown) => (counted.inSql++, digestOfText(String(text))));
    const { record } = createAuditRecorder(db);
    return { record: (n: number, then?: () => void) => db.transaction(() => (record(auditEvent(n)), then?.()))(), counted };
  }
  const storage = () => {
    const s = createSqliteStorage(file.connect());
    return s;
  };

  it("links an event after one its connection recorded in JS, without a digest in SQL", async () => {
    const trail = storage();
    const a = connection();
    a.record(1);
    expect(a.counted.inSql).toBe(1); // the first: the head is read and the text digested in the insert
    a.record(2);
    a.record(3);
    expect(a.counted.inSql).toBe(1);
    expect((await trail.audit!.list("acme", { offset: 0, limit: 10 })).items.map((e) => e.seq)).toStrictEqual([1, 2, 3]);
    expect(await walkChain(trail.audit!, "acme")).toBeNull();
  });

  it("keeps one linear chain when two connections append in turn (each one's guess goes stale)", async () => {
    const trail = storage();
    const [a, b] = [connection(), connection()];
    for (let n = 1; n <= 8; n++) (n % 3 === 0 ? b : a).record(n);
    const items = (await trail.audit!.list("acme", { offset: 0, limit: 10 })).items;
    expect(items.map((e) => e.seq)).toStrictEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(items.map((e) => e.id)).toStrictEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => auditEvent(n).id));
    expect(await walkChain(trail.audit!, "acme")).toBeNull();
    expect((await trail.audit!.head("acme"))?.seq).toBe(8);
  });

  it("links the next event to what was committed when a transaction with an event rolled back", async () => {
    const trail = storage();
    const a = connection();
    a.record(1);
    expect(() =>
      a.record(2, () => {
        throw new Error("the write after its event failed");
      }),
    ).toThrow("failed");
    a.record(3);
    const items = (await trail.audit!.list("acme", { offset: 0, limit: 10 })).items;
    expect(items.map((e) => [e.seq, e.id])).toStrictEqual([
      [1, auditEvent(1).id],
      [2, auditEvent(3).id],
    ]);
    expect(await walkChain(trail.audit!, "acme")).toBeNull();
  });

  it("does not link to a rolled-back event whose seq another connection took meanwhile", async () => {
    const trail = storage();
    const [a, b] = [connection(), connection()];
    a.record(1);
    expect(() =>
      a.record(2, () => {
        throw new Error("rolled back");
      }),
    ).toThrow("rolled back");
    b.record(3); // seq 2 again, another digest: a's guess has the right seq and the wrong digest
    a.record(4);
    expect((await trail.audit!.list("acme", { offset: 0, limit: 10 })).items.map((e) => [e.seq, e.id])).toStrictEqual([
      [1, auditEvent(1).id],
      [2, auditEvent(3).id],
      [3, auditEvent(4).id],
    ]);
    expect(await walkChain(trail.audit!, "acme")).toBeNull();
  });

  it("links after an event the store appended itself, and after pruning", async () => {
    const trail = storage();
    const a = connection();
    a.record(1);
    await trail.audit!.append(auditEvent(2));
    a.record(3);
    await trail.audit!.prune(auditEvent(3).at + 1, 10);
    a.record(4);
    expect((await trail.audit!.list("acme", { offset: 0, limit: 10 })).items.map((e) => e.seq)).toStrictEqual([4]);
    expect(await walkChain(trail.audit!, "acme")).toBeNull();
  });
});
