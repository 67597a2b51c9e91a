import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createDueQueue } from "../../adapters/memory/due-queue.js";
import type { Storage } from "../../src/storage/types.js";
import { at } from "../../src/testing/conformance/fixtures.js";
import { outbox } from "../../src/testing/conformance/outbox-support.js";
import { delivery, rid } from "../../src/testing/conformance/run-task-fixtures.js";

/** The conformance suite's outbox helpers over a fresh memory storage. */
function memoryOutbox() {
  const storage: Storage = createMemoryStorage();
  return outbox({ storage, reopen: async () => storage });
}

/**
 * The memory outbox hands rows out through createDueQueue: a heap by due time, with
 * stale entries skipped. These cases pin what a claim must still mean (D15): every due row, in
 * due order, and never a row some claim holds.
 */
describe("memory outbox: claims served by the due queue", () => {
  it("claims every due delivery in due order, even one filed behind a later one", async () => {
    const { enqueue, claimRows } = memoryOutbox();
    const rows = await enqueue(4, (i) => ({ dueAt: at([10, 30, 20, 40][i]!) }));
    expect((await claimRows(at(25))).map((r) => r.id)).toStrictEqual([rows[0]!.id, rows[2]!.id]);
    expect((await claimRows(at(40))).map((r) => r.id)).toStrictEqual([rows[1]!.id, rows[3]!.id]);
  });

  it("does not hand out a row again at the due time retry now moved it from, while a claim holds it", async () => {
    const { deliveries, enqueue, claimRows, retry } = memoryOutbox();
    const [row] = await enqueue(1);
    const [first] = await claimRows(at(10));
    expect(await retry(row!, first!.fencingToken, { attempt: 1, dueAt: at(40), lastError: "responded with 503" })).toBe(true);
    expect(await deliveries().expedite(row!.taskResultId, at(20))).toStrictEqual({ ok: true });
    const [held] = await claimRows(at(20));
    expect(held).toMatchObject({ id: row!.id, attempt: 1, leaseOwner: "w1" });
    // Its lease runs to second 50: at second 40, its old due time, the row is still held.
    expect(await claimRows(at(40), "w2")).toStrictEqual([]);
    expect(await deliveries().get(row!.id)).toStrictEqual(held);
  });
});

describe("createDueQueue", () => {
  const row = (n: number, second: number) => delivery({ id: rid("dlv", n), dueAt: at(second) });

  it("takes the due rows in due order, then id, whatever order they were filed in", () => {
    const dues = [50, 10, 40, 20, 60, 30, 20, 70, 15, 45];
    // Every rotation of the filing order gives the heap another shape.
    for (let shift = 0; shift < dues.length; shift++) {
      const queue = createDueQueue(() => true);
      const rows = dues.map((second, i) => row(i + 1, second));
      for (const r of [...rows.slice(shift), ...rows.slice(0, shift)]) queue.file(r);
      const expected = [...rows].filter((r) => r.dueAt <= at(45)).sort((a, b) => (a.dueAt !== b.dueAt ? (a.dueAt < b.dueAt ? -1 : 1) : a.id < b.id ? -1 : 1));
      expect(queue.take(at(45), 100).map((r) => r.id), `filed from row ${shift + 1}`).toStrictEqual(expected.map((r) => r.id));
      expect(queue.take(at(45), 100)).toStrictEqual([]);
    }
  });

  it("forgets a row's older entry once the row is filed again with an earlier due time", () => {
    const queue = createDueQueue(() => true);
    const r = row(1, 40);
    queue.file(r);
    r.dueAt = at(20);
    queue.file(r);
    expect(queue.take(at(20), 10)).toStrictEqual([r]);
    // Leased until second 50, as a claim files it.
    r.leaseExpiresAt = at(50);
    queue.file(r);
    expect(queue.take(at(40), 10)).toStrictEqual([]);
    expect(queue.take(at(50), 10)).toStrictEqual([r]);
  });

  it("skips a row that is no longer open", () => {
    const open = new Set([rid("dlv", 1), rid("dlv", 2)]);
    const queue = createDueQueue((id) => open.has(id));
    queue.file(row(1, 10));
    queue.file(row(2, 20));
    open.delete(rid("dlv", 1));
    expect(queue.take(at(30), 10).map((r) => r.id)).toStrictEqual([rid("dlv", 2)]);
  });
});
