import { describe, expect, it } from "vitest";
import type { DeliveryAttemptRecord } from "../../schemas/delivery-attempts.js";
import type { DeliverySettlement } from "../../storage/types.js";
import { race, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";
import { outbox } from "./outbox-support.js";
import { rid } from "./run-task-fixtures.js";

/** An attempt with every field set to a non-default value, so a dropped column shows. */
export function attemptRecord(overrides: Partial<DeliveryAttemptRecord> = {}): DeliveryAttemptRecord {
  return {
    id: rid("tda", 1),
    taskResultId: rid("taskrs", 1),
    deliveryId: rid("dlv", 1),
    number: 1,
    startedAt: at(10),
    durationMs: 1234,
    outcome: "answered",
    status: 404,
    errorCode: null,
    detail: "responded with 404",
    excerpt: '404 Bad Request: unsupported plan format version: expected "0.1", got "1.2" ✓\n\tat line 2',
    excerptTruncated: true,
    agentId: null,
    agentName: null,
    ...overrides,
  };
}

const ALL = { offset: 0, limit: 100 };
const numbers = (items: readonly DeliveryAttemptRecord[]): number[] => items.map((a) => a.number);

function attemptHelpers(ctx: ConformanceContext) {
  const { deliveries, enqueue, claimRows } = outbox(ctx);
  const attempts = () => ctx.storage.deliveryAttempts;
  return { deliveries, enqueue, claimRows, attempts };
}

type AttemptHelpers = ReturnType<typeof attemptHelpers>;

/** An attempt is stored with its row's settlement, and only when that row write happens. */
function attemptWriteCases(h: AttemptHelpers): void {
  const { deliveries, enqueue, claimRows, attempts } = h;
  const failed = attemptRecord({ id: rid("tda", 2), number: 2, startedAt: at(20), outcome: "failed", status: null, errorCode: "ECONNREFUSED", detail: "the connection failed (ECONNREFUSED)", excerpt: null, excerptTruncated: false });

  it("returns a promise and resolves an empty page and nothing pruned when there are none", async () => {
    const pending = attempts().list(rid("taskrs", 1), ALL);
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toStrictEqual({ items: [], total: 0 });
    expect(await attempts().prune(at(9999), 10)).toBe(0);
  });

  it("stores the attempt a close or a retry carries with its row, unchanged, and lists it newest first", async () => {
    const [row] = await enqueue(1);
    const [held] = await claimRows(at(10));
    const retry: DeliverySettlement = { id: row!.id, fencingToken: held!.fencingToken, type: "retry", fields: { attempt: 1, dueAt: at(15), lastError: "responded with 404" }, record: attemptRecord() };
    expect((await deliveries().settle([retry]))[0]!.written).toBe(true);
    const [again] = await claimRows(at(15));
    const close: DeliverySettlement = { id: row!.id, fencingToken: again!.fencingToken, type: "close", fields: { attempt: 2, closedAt: at(21), deliveredAt: null, lastError: "the connection failed (ECONNREFUSED)" }, record: failed };
    expect((await deliveries().settle([close]))[0]!.written).toBe(true);
    expect(await attempts().list(rid("taskrs", 1), ALL)).toStrictEqual({ items: [failed, attemptRecord()], total: 2 });
    expect(await attempts().list(rid("taskrs", 2), ALL)).toStrictEqual({ items: [], total: 0 });
  });

  it("stores nothing for an entry whose row write did not happen (a stale token), and spoils nothing else", async () => {
    const [row, other] = await enqueue(2);
    const held = await claimRows(at(10));
    const mine = attemptRecord({ taskResultId: row!.taskResultId, deliveryId: row!.id });
    const theirs = attemptRecord({ id: rid("tda", 3), taskResultId: other!.taskResultId, deliveryId: other!.id });
    const outcomes = await deliveries().settle([
      { id: row!.id, fencingToken: held[0]!.fencingToken - 1, type: "retry", fields: { attempt: 1, dueAt: at(15), lastError: "x" }, record: mine },
      { id: other!.id, fencingToken: held[1]!.fencingToken, type: "retry", fields: { attempt: 1, dueAt: at(15), lastError: "x" }, record: theirs },
    ]);
    expect(outcomes.map((o) => o.written)).toStrictEqual([false, true]);
    expect(await attempts().list(row!.taskResultId, ALL)).toStrictEqual({ items: [], total: 0 });
    expect(await attempts().list(other!.taskResultId, ALL)).toStrictEqual({ items: [theirs], total: 1 });
  });
}

/** The newest 20 per result are kept, listed newest first and then by number, racing writers too. */
function attemptRetentionCases(h: AttemptHelpers): void {
  const { deliveries, enqueue, claimRows, attempts } = h;

  it("keeps a result's newest 20 attempts of 25, and pages them newest first with the total", async () => {
    const [row] = await enqueue(1);
    for (let n = 1; n <= 25; n++) {
      const [held] = await claimRows(at(10 * n));
      const record = attemptRecord({ id: rid("tda", n), number: n, startedAt: at(10 * n) });
      const entry: DeliverySettlement = { id: row!.id, fencingToken: held!.fencingToken, type: "retry", fields: { attempt: n, dueAt: at(10 * n + 5), lastError: "x" }, record };
      expect((await deliveries().settle([entry]))[0]!.written).toBe(true);
    }
    const kept = await attempts().list(row!.taskResultId, ALL);
    expect(kept.total).toBe(20);
    expect(numbers(kept.items)).toStrictEqual(Array.from({ length: 20 }, (_, i) => 25 - i));
    const second = await attempts().list(row!.taskResultId, { offset: 5, limit: 5 });
    expect({ numbers: numbers(second.items), total: second.total }).toStrictEqual({ numbers: [20, 19, 18, 17, 16], total: 20 });
    expect((await attempts().list(row!.taskResultId, { offset: 40, limit: 5 })).items).toStrictEqual([]);
  });

  it("keeps exactly the newest 20 of 30 attempts of one result settled at once by racing writers", async () => {
    const rows = await enqueue(30, () => ({ taskResultId: rid("taskrs", 1) }));
    const held = await claimRows(at(10), "w1", 30);
    expect(held).toHaveLength(30);
    const outcomes = await race(30, (i) => {
      const row = held[i]!;
      const record = attemptRecord({ id: rid("tda", i + 1), deliveryId: row.id, number: i + 1, startedAt: at(11 + i) });
      return deliveries().settle([{ id: row.id, fencingToken: row.fencingToken, type: "retry", fields: { attempt: i + 1, dueAt: at(100), lastError: "x" }, record }]);
    });
    expect(outcomes.every(([o]) => o!.written)).toBe(true);
    const kept = await attempts().list(rid("taskrs", 1), ALL);
    expect({ numbers: numbers(kept.items), total: kept.total }).toStrictEqual({ numbers: Array.from({ length: 20 }, (_, i) => 30 - i), total: 20 });
  });

  it("never gives an attempt's place to an older one (numbers 20 apart share a place)", async () => {
    const rows = await enqueue(2, () => ({ taskResultId: rid("taskrs", 1) }));
    const held = await claimRows(at(10));
    const newer = attemptRecord({ id: rid("tda", 21), deliveryId: rows[0]!.id, number: 21, startedAt: at(30) });
    const older = attemptRecord({ id: rid("tda", 1), deliveryId: rows[1]!.id, number: 1, startedAt: at(40) });
    for (const [i, record] of [newer, older].entries()) {
      const entry: DeliverySettlement = { id: held[i]!.id, fencingToken: held[i]!.fencingToken, type: "retry", fields: { attempt: record.number, dueAt: at(50), lastError: "x" }, record };
      expect((await deliveries().settle([entry]))[0]!.written).toBe(true);
    }
    expect(await attempts().list(rid("taskrs", 1), ALL)).toStrictEqual({ items: [newer], total: 1 });
  });

  it("orders attempts that started together by number, descending", async () => {
    const [row] = await enqueue(1);
    const [first] = await claimRows(at(10));
    const later = attemptRecord({ id: rid("tda", 1), number: 2 });
    const earlier = attemptRecord({ id: rid("tda", 2), number: 1 });
    await deliveries().settle([{ id: row!.id, fencingToken: first!.fencingToken, type: "retry", fields: { attempt: 2, dueAt: at(10), lastError: "x" }, record: later }]);
    const [second] = await claimRows(at(10));
    await deliveries().settle([{ id: row!.id, fencingToken: second!.fencingToken, type: "retry", fields: { attempt: 3, dueAt: at(50), lastError: "x" }, record: earlier }]);
    expect(await attempts().list(row!.taskResultId, ALL)).toStrictEqual({ items: [later, earlier], total: 2 });
  });
}

/** Pruning by age, and attempts kept through a reopen. */
function attemptPruneAndDurabilityCases(ctx: ConformanceContext, h: AttemptHelpers): void {
  const { deliveries, enqueue, claimRows, attempts } = h;

  it("prunes attempts started before the cutoff, oldest first, at most `limit` per call, across results", async () => {
    const [a, b] = await enqueue(2);
    const held = await claimRows(at(10));
    const startedAt = [at(1), at(5)];
    await deliveries().settle(held.map((row, i) => ({ id: row.id, fencingToken: row.fencingToken, type: "retry" as const, fields: { attempt: 1, dueAt: at(30), lastError: "x" }, record: attemptRecord({ id: rid("tda", i + 1), taskResultId: row.taskResultId, deliveryId: row.id, startedAt: startedAt[i]! }) })));
    const later = await claimRows(at(30));
    await deliveries().settle([{ id: later[0]!.id, fencingToken: later[0]!.fencingToken, type: "retry", fields: { attempt: 2, dueAt: at(90), lastError: "x" }, record: attemptRecord({ id: rid("tda", 3), taskResultId: a!.taskResultId, deliveryId: a!.id, number: 2, startedAt: at(30) }) }]);
    expect(await attempts().prune(at(30), 1)).toBe(1);
    expect((await attempts().list(a!.taskResultId, ALL)).items.map((x) => x.id)).toStrictEqual([rid("tda", 3)]);
    expect(await attempts().prune(at(30), 10)).toBe(1);
    expect(await attempts().list(b!.taskResultId, ALL)).toStrictEqual({ items: [], total: 0 });
    expect(await attempts().prune(at(30), 10)).toBe(0);
    expect((await attempts().list(a!.taskResultId, ALL)).total).toBe(1);
  });

  it("keeps attempts through a reopen", async () => {
    const [row] = await enqueue(1);
    const [held] = await claimRows(at(10));
    await deliveries().settle([{ id: row!.id, fencingToken: held!.fencingToken, type: "retry", fields: { attempt: 1, dueAt: at(15), lastError: "x" }, record: attemptRecord() }]);
    await ctx.reopen();
    expect(await attempts().list(row!.taskResultId, ALL)).toStrictEqual({ items: [attemptRecord()], total: 1 });
  });
}

/** Delivery attempts (decision D31): written with their row's settlement, the newest 20 per result, pruned by age. */
export function describeDeliveryAttemptCases(ctx: ConformanceContext): void {
  const h = attemptHelpers(ctx);

  describe("delivery attempts", () => {
    attemptWriteCases(h);
    attemptRetentionCases(h);
    attemptPruneAndDurabilityCases(ctx, h);
  });
}
