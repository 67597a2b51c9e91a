import { describe, expect, it } from "vitest";
import type { TaskResultRecord } from "../../schemas/run-task-records.js";
import type { ResultStatus } from "../../schemas/run-tasks.js";
import { race, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";
import { describeDeliveryPoolCases } from "./delivery-pools.cases.js";
import { delivered, LEASE, outbox } from "./outbox-support.js";
import { delivery, result, rid, run, runTask, stage } from "./run-task-fixtures.js";

const plus = (iso: string, ms: number): string => new Date(Date.parse(iso) + ms).toISOString();

function taskDeliveryHelpers(ctx: ConformanceContext) {
  const s = () => ctx.storage;
  const { deliveries, enqueue, claim, claimRows, close, retry, release, leased, resultOf } = outbox(ctx);
  return { s, deliveries, enqueue, claim, claimRows, close, retry, release, leased, resultOf };
}

type DeliveryHelpers = ReturnType<typeof taskDeliveryHelpers>;

/** A claim leases due open rows, each to one claimant, and a newer claim's token retires the old one. */
function claimLeaseCases(h: DeliveryHelpers): void {
  const { deliveries, enqueue, claim, claimRows, close, retry, release, leased } = h;

  it("leases due open rows in due order, each with the owner, an expiry, a new fencing token and its payload", async () => {
    const rows = await enqueue(3, (i) => ({ dueAt: at(10 - i), fencingToken: i }));
    const got = await claimRows(at(20));
    expect(got).toStrictEqual([leased(rows[2]!, "w1", at(20), 3), leased(rows[1]!, "w1", at(20), 2), leased(rows[0]!, "w1", at(20), 1)]);
    expect(await deliveries().get(rows[0]!.id)).toStrictEqual(got[2]);
  });

  it("skips rows not yet due, closed rows and rows whose lease has not expired, and honours the limit", async () => {
    const rows = await enqueue(4, (i) => ({ dueAt: at(i) }));
    const [first] = await claimRows(at(0), "w0", 1);
    expect(await close(first!, first!.fencingToken, delivered(1))).toBe(true);
    expect((await claimRows(at(2), "w1", 1)).map((r) => r.id)).toStrictEqual([rows[1]!.id]);
    expect((await claimRows(at(2), "w2")).map((r) => r.id)).toStrictEqual([rows[2]!.id]);
    expect(await claim(at(2), "w3")).toStrictEqual([]);
    expect(await claim(at(2), "w3", 0)).toStrictEqual([]);
  });

  it("gives a row whose lease expired to the next claimant with a newer token, and the old token writes nothing", async () => {
    const [row] = await enqueue(1);
    const [first] = await claimRows(at(10), "w1");
    expect(await claim(at(39), "w2")).toStrictEqual([]);
    const [second] = await claimRows(at(40), "w2");
    expect(second).toStrictEqual(leased(row!, "w2", at(40), first!.fencingToken + 1));
    expect(await close(row!, first!.fencingToken, delivered(41))).toBe(false);
    expect(await retry(row!, first!.fencingToken, { attempt: 1, dueAt: at(50), lastError: "x" })).toBe(false);
    expect(await release(row!, first!.fencingToken)).toBe(false);
    expect(await deliveries().get(row!.id)).toStrictEqual(second);
    expect(await close(row!, second!.fencingToken, delivered(41))).toBe(true);
  });

  it("hands each row to exactly one of 10 racing claimants", async () => {
    await enqueue(7);
    const claims = await race(10, (i) => claimRows(at(10), `w${i}`, 2));
    const ids = claims.flat().map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toStrictEqual(Array.from({ length: 7 }, (_, i) => rid("dlv", i + 1)));
    for (const [i, rows] of claims.entries()) for (const r of rows) expect((await deliveries().get(r.id))?.leaseOwner).toBe(`w${i}`);
  });
}

/** A claim opens a pending result's deadline window and returns the task's key and the result as stored. */
function claimResultCases(h: DeliveryHelpers): void {
  const { s, enqueue, claim, retry, resultOf } = h;

  it("opens the deadline window of a pending result that has none, in the claim itself, and returns the result as stored", async () => {
    await enqueue(2);
    const [c1, c2] = await claim(at(10), "w1", 10, LEASE, { ms: 600_000, maxMs: 3_600_000 });
    const stored = await resultOf(rid("taskrs", 1));
    expect(stored).toMatchObject({ deadlineAt: plus(at(10), 600_000), deadlineMaxAt: plus(at(10), 3_600_000), version: 3, updatedAt: at(10) });
    expect(c1!.result).toStrictEqual({ status: "pending", statusTimestamps: {}, deadlineAt: stored!.deadlineAt, version: 3, updatedAt: at(10) });
    expect(c2!.result?.deadlineAt).toBe(plus(at(10), 600_000));
    // A later claim (a retry) leaves an open window alone.
    expect(await retry(c1!.row, c1!.row.fencingToken, { attempt: 1, dueAt: at(20), lastError: "responded with 500" })).toBe(true);
    const [again] = await claim(at(20), "w2", 10, LEASE, { ms: 1_000, maxMs: null });
    expect(again!.result).toMatchObject({ deadlineAt: plus(at(10), 600_000), version: 3 });
    expect(await resultOf(rid("taskrs", 1))).toStrictEqual(stored);
  });

  it("leaves results that are not pending untouched, and writes a null cap without a max window", async () => {
    const results = [result({ id: rid("taskrs", 1), status: "running" }), result({ id: rid("taskrs", 2), position: 1 })];
    await s().runs.create(run(), [stage({ status: "running" })], results);
    await s().runTasks.insert(runTask());
    const rows = results.map((r, i) => delivery({ id: rid("dlv", i + 1), taskResultId: r.id }));
    const writes = results.map((r) => ({ next: { ...r, version: 2 }, expected: { statuses: [r.status], version: 1 } }));
    const st = stage({ status: "running" });
    expect(await s().taskStages.start({ ...st, version: 2 }, { statuses: ["running"], version: 1 }, writes, rows)).not.toBeNull();
    const [running, pending] = await claim(at(10));
    expect(running!.result).toMatchObject({ status: "running", deadlineAt: null, version: 2 });
    expect(await resultOf(rid("taskrs", 1))).toMatchObject({ deadlineAt: null, version: 2, updatedAt: at(0) });
    expect(pending!.result).toMatchObject({ status: "pending", deadlineAt: plus(at(10), 600_000), version: 3 });
    expect((await resultOf(rid("taskrs", 2)))?.deadlineMaxAt).toBeNull();
  });

  it("returns the task's sealed HMAC key as stored now, null without a key, no task once deleted, no result when there is none", async () => {
    const rows = await enqueue(3, (i) => ({ taskId: rid("task", i + 1), ...(i === 2 ? { taskResultId: rid("taskrs", 99) } : {}) }));
    await s().runTasks.insert(runTask({ id: rid("task", 2), name: "plain", hmacKey: null }));
    await s().runTasks.insert(runTask({ id: rid("task", 3), name: "gone" }));
    expect(await s().runTasks.delete(rid("task", 3))).toBe(true);
    const got = await claim(at(10));
    expect(got.map((c) => c.row.id)).toStrictEqual(rows.map((r) => r.id));
    expect(got.map((c) => c.task)).toStrictEqual([{ hmacKey: runTask().hmacKey }, { hmacKey: null }, null]);
    expect(got[2]!.result).toBeNull();
  });

  it("keeps each claimed row's result window and lease across 8 racing claimants, one window per result", async () => {
    await enqueue(20);
    const claims = await race(8, (i) => claim(plus(at(10), i), `w${i}`, 3));
    const all = claims.flat();
    expect(new Set(all.map((c) => c.row.id)).size).toBe(all.length);
    for (const c of all) {
      const stored = await resultOf(c.row.taskResultId);
      expect(stored?.version).toBe(3);
      expect(c.result?.deadlineAt).toBe(stored?.deadlineAt);
    }
  });
}

function taskDeliveryClaimCases(h: DeliveryHelpers): void {
  describe("task deliveries: claim", () => {
    claimLeaseCases(h);
    claimResultCases(h);
  });
}

function taskDeliveryCases2(ctx: ConformanceContext, h: ReturnType<typeof taskDeliveryHelpers>): void {
  const { s, deliveries, enqueue, claim, claimRows, close, retry, release, leased } = h;

  describe("task results and stages: the sweeper's queries", () => {
    const open = (n: number, status: ResultStatus, deadlineAt: string | null): TaskResultRecord =>
      result({ id: rid("taskrs", n), position: n, status, deadlineAt });


    it("lists open results past their deadline in deadline order, and nothing else", async () => {
      const rows = [
        open(1, "running", at(30)),
        open(2, "pending", at(10)),
        open(3, "passed", at(5)),
        open(4, "pending", null),
        open(5, "running", at(31)),
        open(6, "errored", at(1)),
        open(7, "pending", at(30)),
      ];
      await s().runs.create(run(), [stage()], rows);
      expect((await s().taskResults.listPastDeadline(at(30), 10)).map((r) => r.id)).toStrictEqual([rid("taskrs", 2), rid("taskrs", 1), rid("taskrs", 7)]);
      expect((await s().taskResults.listPastDeadline(at(30), 1)).map((r) => r.id)).toStrictEqual([rid("taskrs", 2)]);
      expect(await s().taskResults.listPastDeadline(at(9), 10)).toStrictEqual([]);
      expect((await s().taskResults.listPastDeadline(at(40), 10))[3]).toStrictEqual(rows[4]);
    });

    it("lists running stages whose results are all final", async () => {
      const settled = stage({ id: rid("ts", 1), status: "running" });
      const busy = stage({ id: rid("ts", 2), stage: "pre_plan", sequence: 0, status: "running" });
      const done = stage({ id: rid("ts", 3), stage: "pre_apply", sequence: 2, status: "passed" });
      await s().runs.create(run(), [settled, busy, done], [
        result({ id: rid("taskrs", 1), stageId: settled.id, status: "passed" }),
        result({ id: rid("taskrs", 2), stageId: settled.id, position: 1, status: "unreachable" }),
        result({ id: rid("taskrs", 3), stageId: busy.id, status: "passed" }),
        result({ id: rid("taskrs", 4), stageId: busy.id, position: 1, status: "running" }),
        result({ id: rid("taskrs", 5), stageId: done.id, status: "passed" }),
      ]);
      expect(await s().taskStages.listUnsettled(10)).toStrictEqual([settled]);
      expect(await s().taskStages.listUnsettled(0)).toStrictEqual([]);
    });
  });

  describe("task deliveries: stats (optional)", () => {
    it("counts open rows due and unleased, leased rows, and the oldest due time, ignoring closed rows", async ({ skip }) => {
      if (!deliveries().stats) return skip("the adapter offers no outbox stats");
      const none = { retrying: 0, oldestRetryingAt: null };
      expect(await deliveries().stats!(at(0))).toStrictEqual({ due: 0, leased: 0, oldestDueAt: null, ...none });
      const rows = await enqueue(5, (i) => ({ dueAt: at(i) }));
      const [first] = await claimRows(at(1), "w1", 1);
      const [second] = await claimRows(at(1), "w1", 1);
      expect(await close(second!, second!.fencingToken, delivered(2))).toBe(true);
      // rows[0] leased until at(31), rows[1] closed, rows[2..3] due at at(3), rows[4] not yet due.
      expect(await deliveries().stats!(at(3))).toStrictEqual({ due: 2, leased: 1, oldestDueAt: rows[2]!.dueAt, ...none });
      // Once its lease has run out, the leased row counts as due again.
      expect(await deliveries().stats!(at(40))).toStrictEqual({ due: 4, leased: 0, oldestDueAt: first!.dueAt, ...none });
    });

    it("counts the open rows that have had an attempt as retrying, with the oldest one's creation time", async ({ skip }) => {
      if (!deliveries().stats) return skip("the adapter offers no outbox stats");
      const rows = await enqueue(4, (i) => ({ dueAt: at(i), createdAt: at(i) }));
      const held = await claimRows(at(5), "w1", 4);
      expect(held.map((r) => r.id)).toStrictEqual(rows.map((r) => r.id));
      // rows[0] retries later, rows[1] closes undelivered, rows[2] retries, rows[3] is released untried.
      expect(await retry(held[0]!, held[0]!.fencingToken, { attempt: 1, dueAt: at(60), lastError: "responded with 401" })).toBe(true);
      expect(await close(held[1]!, held[1]!.fencingToken, { attempt: 1, closedAt: at(6), deliveredAt: null, lastError: "x" })).toBe(true);
      expect(await retry(held[2]!, held[2]!.fencingToken, { attempt: 2, dueAt: at(7), lastError: "timeout" })).toBe(true);
      expect(await release(held[3]!, held[3]!.fencingToken)).toBe(true);
      expect(await deliveries().stats!(at(8))).toMatchObject({ retrying: 2, oldestRetryingAt: rows[0]!.createdAt });
      // Retrying whether due, leased or waiting: a claim changes nothing of it.
      await claimRows(at(8), "w2", 4);
      expect(await deliveries().stats!(at(8))).toMatchObject({ retrying: 2, oldestRetryingAt: rows[0]!.createdAt });
    });
  });
}

/** The delivery outbox's claim and the sweeper's queries (D15, D16). */
export function describeTaskDeliveryCases(ctx: ConformanceContext): void {
  const h = taskDeliveryHelpers(ctx);
  taskDeliveryClaimCases(h);
  taskDeliveryCases2(ctx, h);
  describeDeliveryPoolCases(ctx);
}
