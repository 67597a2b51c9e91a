import { describe, expect, it } from "vitest";
import type { DeliverySettlement } from "../../storage/types.js";
import { race, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";
import { delivered, outbox } from "./outbox-support.js";
import { rid } from "./run-task-fixtures.js";

const RUNNING = { status: "running" as const, statusTimestamps: { "running-at": "2024-05-01T10:00:11Z" }, updatedAt: at(11) };

function taskSettleHelpers(ctx: ConformanceContext) {
  const { deliveries, enqueue, claim, claimRows, close, retry, release, resultOf } = outbox(ctx);
  return { deliveries, enqueue, claim, claimRows, close, retry, release, resultOf };
}

type SettleHelpers = ReturnType<typeof taskSettleHelpers>;

function settleOneRowCases(h: SettleHelpers): void {
  const { deliveries, enqueue, claim, claimRows, close, retry, release } = h;

  describe("task deliveries: settle one row", () => {
    it("closes a row for good: its lease is cleared and it is never claimed again", async () => {
      const [row] = await enqueue(1);
      const [held] = await claimRows(at(10));
      const fields = { attempt: 3, closedAt: at(11), deliveredAt: null, lastError: "responded with 500" };
      expect(await close(row!, held!.fencingToken, fields)).toBe(true);
      expect(await deliveries().get(row!.id)).toStrictEqual({ ...held, ...fields, leaseOwner: null, leaseExpiresAt: null });
      expect(await close(row!, held!.fencingToken, fields)).toBe(false);
      expect(await release(row!, held!.fencingToken)).toBe(false);
      expect(await claim(at(9999))).toStrictEqual([]);
    });

    it("reschedules a failed attempt: claimable again from its new due time only", async () => {
      const [row] = await enqueue(1);
      const [held] = await claimRows(at(10));
      expect(await retry(row!, held!.fencingToken, { attempt: 1, dueAt: at(12), lastError: "timeout" })).toBe(true);
      expect(await deliveries().get(row!.id)).toStrictEqual({ ...held, attempt: 1, dueAt: at(12), lastError: "timeout", leaseOwner: null, leaseExpiresAt: null });
      expect(await claim(at(11))).toStrictEqual([]);
      expect((await claimRows(at(12))).map((r) => [r.id, r.attempt, r.fencingToken])).toStrictEqual([[row!.id, 1, held!.fencingToken + 1]]);
    });

    it("releases a lease unused: attempt and due time stay, and the row is claimable at once", async () => {
      const [row] = await enqueue(1);
      const [held] = await claimRows(at(10));
      expect(await release(row!, held!.fencingToken)).toBe(true);
      expect(await deliveries().get(row!.id)).toStrictEqual({ ...held, leaseOwner: null, leaseExpiresAt: null });
      expect((await claimRows(at(10), "w2")).map((r) => r.leaseOwner)).toStrictEqual(["w2"]);
      expect(await release({ id: rid("dlv", 99) }, 1)).toBe(false);
    });
  });
}

/** A batch answers per entry, and a batch naming one row twice is refused whole. */
function settleBatchEntryCases(h: SettleHelpers): void {
  const { deliveries, enqueue, claimRows } = h;

  it("reports per entry, in order, what was written; a stale token or unknown row writes nothing and spoils nothing else", async () => {
    const rows = await enqueue(4);
    const held = await claimRows(at(10));
    const batch: DeliverySettlement[] = [
      { id: rows[0]!.id, fencingToken: held[0]!.fencingToken, type: "close", fields: delivered(11) },
      { id: rows[1]!.id, fencingToken: held[1]!.fencingToken - 1, type: "release" },
      { id: rid("dlv", 99), fencingToken: 1, type: "close", fields: delivered(11) },
      { id: rows[2]!.id, fencingToken: held[2]!.fencingToken, type: "retry", fields: { attempt: 1, dueAt: at(30), lastError: "timeout" } },
      { id: rows[3]!.id, fencingToken: held[3]!.fencingToken, type: "release" },
    ];
    const outcomes = await deliveries().settle(batch);
    expect(outcomes.map((o) => o.written)).toStrictEqual([true, false, false, true, true]);
    expect(outcomes.every((o) => o.result === false)).toBe(true);
    expect(await deliveries().get(rows[1]!.id)).toStrictEqual(held[1]);
    expect((await deliveries().get(rows[0]!.id))?.closedAt).toBe(at(11));
    expect((await deliveries().get(rows[2]!.id))?.dueAt).toBe(at(30));
    expect(await deliveries().settle([])).toStrictEqual([]);
  });

  it("refuses a batch that names one row twice, writing nothing", async () => {
    const [row, other] = await enqueue(2);
    const [held, heldOther] = await claimRows(at(10));
    const twice: DeliverySettlement[] = [
      { id: other!.id, fencingToken: heldOther!.fencingToken, type: "release" },
      { id: row!.id, fencingToken: held!.fencingToken, type: "close", fields: delivered(11) },
      { id: row!.id, fencingToken: held!.fencingToken, type: "release" },
    ];
    await expect(deliveries().settle(twice)).rejects.toThrow(TypeError);
    expect(await deliveries().get(row!.id)).toStrictEqual(held);
    expect(await deliveries().get(other!.id)).toStrictEqual(heldOther);
  });
}

/** A close carries its result's advance, which lands only while the result is as claimed. */
function settleResultAdvanceCases(ctx: ConformanceContext, h: SettleHelpers): void {
  const { deliveries, enqueue, claim, resultOf } = h;

  it("moves a delivered row's result with the close, writing only status, timestamps, version and updatedAt", async () => {
    const [row] = await enqueue(1);
    const [c] = await claim(at(10));
    const before = await resultOf(row!.taskResultId);
    const advance = { id: row!.taskResultId, expected: { statuses: ["pending" as const], version: c!.result!.version }, version: c!.result!.version + 1, ...RUNNING };
    const [outcome] = await deliveries().settle([{ id: row!.id, fencingToken: c!.row.fencingToken, type: "close", fields: delivered(11), result: advance }]);
    expect(outcome).toStrictEqual({ written: true, result: true });
    expect(await resultOf(row!.taskResultId)).toStrictEqual({ ...before, ...RUNNING, version: before!.version + 1 });
  });

  it("still closes the row when the result changed since the claim, and leaves the result as it is", async () => {
    const [row, other] = await enqueue(2);
    const [c, d] = await claim(at(10));
    const current = await resultOf(row!.taskResultId);
    const moved = { ...current!, status: "running" as const, version: current!.version + 1, message: "called back" };
    expect(await ctx.storage.taskResults.transition(current!.id, { statuses: ["pending"], version: current!.version }, moved)).not.toBeNull();
    const advance = (taskResultId: string, version: number) => ({ id: taskResultId, expected: { statuses: ["pending" as const], version }, version: version + 1, ...RUNNING });
    const outcomes = await deliveries().settle([
      { id: row!.id, fencingToken: c!.row.fencingToken, type: "close", fields: delivered(11), result: advance(row!.taskResultId, c!.result!.version) },
      { id: other!.id, fencingToken: d!.row.fencingToken - 1, type: "close", fields: delivered(11), result: advance(other!.taskResultId, d!.result!.version) },
    ]);
    expect(outcomes).toStrictEqual([{ written: true, result: false }, { written: false, result: false }]);
    expect(await resultOf(row!.taskResultId)).toStrictEqual(moved);
    expect((await resultOf(other!.taskResultId))?.status).toBe("pending");
  });

  it("advances a result that two closes of one batch name once, and says so for one of them only", async () => {
    const [row] = await enqueue(2, () => ({ taskResultId: rid("taskrs", 1) }));
    const claimed = await claim(at(10));
    const before = await resultOf(row!.taskResultId);
    const outcomes = await deliveries().settle(
      claimed.map((c) => {
        const result = { id: c.row.taskResultId, expected: { statuses: ["pending" as const], version: c.result!.version }, version: c.result!.version + 1, ...RUNNING };
        return { id: c.row.id, fencingToken: c.row.fencingToken, type: "close" as const, fields: delivered(11), result };
      }),
    );
    expect(outcomes.map((o) => o.written)).toStrictEqual([true, true]);
    expect(outcomes.filter((o) => o.result)).toHaveLength(1);
    expect(await resultOf(row!.taskResultId)).toStrictEqual({ ...before, ...RUNNING, version: before!.version + 1 });
  });

  it("leaves a result whose version moved since the claim as it is, though its status is still the expected one", async () => {
    const [row] = await enqueue(1);
    const [c] = await claim(at(10));
    const current = await resultOf(row!.taskResultId);
    // Still pending, one version on (a write that kept the status): the advance no longer holds.
    const bumped = { ...current!, version: current!.version + 1, message: "noted" };
    expect(await ctx.storage.taskResults.transition(current!.id, { statuses: ["pending"], version: current!.version }, bumped)).not.toBeNull();
    const advance = { id: row!.taskResultId, expected: { statuses: ["pending" as const], version: c!.result!.version }, version: c!.result!.version + 1, ...RUNNING };
    const [outcome] = await deliveries().settle([{ id: row!.id, fencingToken: c!.row.fencingToken, type: "close", fields: delivered(11), result: advance }]);
    expect(outcome).toStrictEqual({ written: true, result: false });
    expect(await resultOf(row!.taskResultId)).toStrictEqual(bumped);
    expect((await deliveries().get(row!.id))?.closedAt).toBe(at(11));
  });
}

/** Racing writers: only the newest claim's token lands, and overlapping batches write each row once. */
function settleRaceCases(h: SettleHelpers): void {
  const { deliveries, enqueue, claim, claimRows, close, retry, release, resultOf } = h;

  it("lets only the newest claim's token land when a replaced claimant races it", async () => {
    const [row] = await enqueue(1);
    const [old] = await claimRows(at(10), "w1");
    const [current] = await claimRows(at(40), "w2");
    // Odd writers hold the current token and close the row; even ones hold the replaced token
    // and try every settlement. Exactly one close lands, and nothing of the replaced claim.
    const writes = await race(12, (i) => {
      if (i % 2) return close(row!, current!.fencingToken, { attempt: 1, closedAt: at(41), deliveredAt: at(41), lastError: `writer ${i}` });
      if (i % 3 === 0) return release(row!, old!.fencingToken);
      if (i % 3 === 1) return retry(row!, old!.fencingToken, { attempt: 9, dueAt: at(99), lastError: "stale" });
      return close(row!, old!.fencingToken, { attempt: 9, closedAt: at(99), deliveredAt: null, lastError: "stale" });
    });
    expect(writes.filter(Boolean)).toHaveLength(1);
    const winner = writes.findIndex(Boolean);
    expect(winner % 2).toBe(1);
    expect(await deliveries().get(row!.id)).toStrictEqual({
      ...current,
      attempt: 1,
      closedAt: at(41),
      deliveredAt: at(41),
      lastError: `writer ${winner}`,
      leaseOwner: null,
      leaseExpiresAt: null,
    });
  });

  it("writes each row once when 8 racing batches overlap, and each result advance at most once", async () => {
    const rows = await enqueue(6);
    const held = await claim(at(10));
    const entry = (k: number): DeliverySettlement => {
      const c = held[k]!;
      const result = { id: c.row.taskResultId, expected: { statuses: ["pending" as const], version: c.result!.version }, version: c.result!.version + 1, ...RUNNING };
      return { id: c.row.id, fencingToken: c.row.fencingToken, type: "close", fields: delivered(11), result };
    };
    // Batch i covers rows i % 6 and (i + 1) % 6: every row is named by two or more batches.
    const outcomes = await race(8, (i) => deliveries().settle([entry(i % 6), entry((i + 1) % 6)]));
    const byRow = new Map<string, number>();
    for (const [i, pair] of outcomes.entries()) {
      for (const [j, o] of pair.entries()) {
        expect(o.result).toBe(o.written);
        if (o.written) byRow.set(held[(i + j) % 6]!.row.id, (byRow.get(held[(i + j) % 6]!.row.id) ?? 0) + 1);
      }
    }
    expect([...byRow.keys()].sort()).toStrictEqual(rows.map((r) => r.id).sort());
    expect([...byRow.values()].every((n) => n === 1)).toBe(true);
    for (const r of rows) expect((await resultOf(r.taskResultId))?.version).toBe(held[0]!.result!.version + 1);
  });
}

function settleBatchCases(ctx: ConformanceContext, h: SettleHelpers): void {
  describe("task deliveries: settle batches", () => {
    settleBatchEntryCases(h);
    settleResultAdvanceCases(ctx, h);
    settleRaceCases(h);
  });
}

function settleDurabilityCases(ctx: ConformanceContext, h: SettleHelpers): void {
  const { deliveries, enqueue, claim, claimRows, close, retry, release, resultOf } = h;

  describe("task deliveries: durability", () => {
    it("keeps leases, tokens, closed rows, retries and result advances through a reopen", async () => {
      const rows = await enqueue(3);
      const held = await claim(at(10), "w1");
      const advance = { id: rows[0]!.taskResultId, expected: { statuses: ["pending" as const], version: held[0]!.result!.version }, version: held[0]!.result!.version + 1, ...RUNNING };
      await deliveries().settle([
        { id: rows[0]!.id, fencingToken: held[0]!.row.fencingToken, type: "close", fields: delivered(11), result: advance },
        { id: rows[1]!.id, fencingToken: held[1]!.row.fencingToken, type: "retry", fields: { attempt: 1, dueAt: at(15), lastError: "responded with 503" } },
      ]);
      const before = await Promise.all(rows.map((r) => deliveries().get(r.id)));
      const resultsBefore = await Promise.all(rows.map((r) => resultOf(r.taskResultId)));
      await ctx.reopen();
      expect(await Promise.all(rows.map((r) => deliveries().get(r.id)))).toStrictEqual(before);
      expect(await Promise.all(rows.map((r) => resultOf(r.taskResultId)))).toStrictEqual(resultsBefore);
      expect(await claim(at(14), "w2")).toStrictEqual([]);
      expect(await release(rows[2]!, held[2]!.row.fencingToken)).toBe(true);
      // Due order: the released row kept its original due time, before the retry's.
      expect((await claimRows(at(15), "w2")).map((r) => [r.id, r.fencingToken, r.payload])).toStrictEqual([
        [rows[2]!.id, held[2]!.row.fencingToken + 1, "sealed-2"],
        [rows[1]!.id, held[1]!.row.fencingToken + 1, "sealed-1"],
      ]);
    });
  });
}

/** The outbox's batched `settle` (D15): per-row fencing, the result advance, batches racing. */
export function describeTaskSettleCases(ctx: ConformanceContext): void {
  const h = taskSettleHelpers(ctx);
  settleOneRowCases(h);
  settleBatchCases(ctx, h);
  settleDurabilityCases(ctx, h);
}
