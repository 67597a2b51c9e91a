import { describe, expect, it } from "vitest";
import type { TaskDeliveryRecord, TaskResultRecord } from "../../src/schemas/run-task-records.js";
import type { ResultStatus } from "../../src/schemas/run-tasks.js";
import { race, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";
import { delivery, result, rid, run, stage, started } from "./run-task-fixtures.js";

const PENDING = { statuses: ["pending"] as const, version: 1 };
const LEASE = 30_000;

/** The delivery outbox's lease primitives and the sweeper's queries (D15, D16). */
export function describeTaskDeliveryCases(ctx: ConformanceContext): void {
  const s = () => ctx.storage;
  const deliveries = () => s().taskDeliveries;

  /** A started stage whose `count` results each got one delivery; `shape(i)` adjusts row i. */
  async function enqueue(count: number, shape: (i: number) => Partial<TaskDeliveryRecord> = () => ({})): Promise<TaskDeliveryRecord[]> {
    const results = Array.from({ length: count }, (_, i) => result({ id: rid("taskrs", i + 1), position: i }));
    await s().runs.create(run(), [stage()], results);
    const rows = results.map((r, i) => delivery({ id: rid("dlv", i + 1), taskResultId: r.id, ...shape(i) }));
    const writes = results.map((r, i) => ({ next: { ...r, accessTokenDigest: `digest-${i}`, version: 2 }, expected: PENDING }));
    expect(await s().taskStages.start(started(stage()), PENDING, writes, rows)).not.toBeNull();
    return rows;
  }
  const claim = (now: string, owner = "w1", limit = 10, leaseMs = LEASE) => deliveries().claim({ now, owner, leaseMs, limit });
  const leased = (row: TaskDeliveryRecord, owner: string, now: string, token: number): TaskDeliveryRecord => ({
    ...row,
    leaseOwner: owner,
    leaseExpiresAt: new Date(Date.parse(now) + LEASE).toISOString(),
    fencingToken: token,
  });

  describe("task deliveries: claim", () => {
    it("leases due open rows in due order, each with the owner, an expiry and a new fencing token", async () => {
      const rows = await enqueue(3, (i) => ({ dueAt: at(10 - i), fencingToken: i }));
      const got = await claim(at(20));
      expect(got).toStrictEqual([leased(rows[2]!, "w1", at(20), 3), leased(rows[1]!, "w1", at(20), 2), leased(rows[0]!, "w1", at(20), 1)]);
      expect(await deliveries().get(rows[0]!.id)).toStrictEqual(got[2]);
    });

    it("skips rows not yet due, closed rows and rows whose lease has not expired, and honours the limit", async () => {
      const rows = await enqueue(4, (i) => ({ dueAt: at(i) }));
      const [first] = await claim(at(0), "w0", 1);
      expect(await deliveries().complete(first!.id, first!.fencingToken, { attempt: 1, closedAt: at(1), deliveredAt: at(1), lastError: null })).toBe(true);
      expect((await claim(at(2), "w1", 1)).map((r) => r.id)).toStrictEqual([rows[1]!.id]);
      expect((await claim(at(2), "w2")).map((r) => r.id)).toStrictEqual([rows[2]!.id]);
      expect(await claim(at(2), "w3")).toStrictEqual([]);
      expect(await claim(at(2), "w3", 0)).toStrictEqual([]);
    });

    it("gives a row whose lease expired to the next claimant with a newer token, and the old token writes nothing", async () => {
      const [row] = await enqueue(1);
      const [first] = await claim(at(10), "w1");
      expect(await claim(at(39), "w2")).toStrictEqual([]);
      const [second] = await claim(at(40), "w2");
      expect(second).toStrictEqual(leased(row!, "w2", at(40), first!.fencingToken + 1));
      const fields = { attempt: 1, closedAt: at(41), deliveredAt: at(41), lastError: null };
      expect(await deliveries().complete(row!.id, first!.fencingToken, fields)).toBe(false);
      expect(await deliveries().reschedule(row!.id, first!.fencingToken, { attempt: 1, dueAt: at(50), lastError: "x" })).toBe(false);
      expect(await deliveries().release(row!.id, first!.fencingToken)).toBe(false);
      expect(await deliveries().get(row!.id)).toStrictEqual(second);
      expect(await deliveries().complete(row!.id, second!.fencingToken, fields)).toBe(true);
    });

    it("hands each row to exactly one of 10 racing claimants", async () => {
      await enqueue(7);
      const claims = await race(10, (i) => claim(at(10), `w${i}`, 2));
      const ids = claims.flat().map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toStrictEqual(Array.from({ length: 7 }, (_, i) => rid("dlv", i + 1)));
      for (const [i, rows] of claims.entries()) for (const r of rows) expect((await deliveries().get(r.id))?.leaseOwner).toBe(`w${i}`);
    });
  });

  describe("task deliveries: complete, reschedule, release", () => {
    it("closes a row for good: its lease is cleared and it is never claimed again", async () => {
      const [row] = await enqueue(1);
      const [held] = await claim(at(10));
      const fields = { attempt: 3, closedAt: at(11), deliveredAt: null, lastError: "responded with 500" };
      expect(await deliveries().complete(row!.id, held!.fencingToken, fields)).toBe(true);
      expect(await deliveries().get(row!.id)).toStrictEqual({ ...held, ...fields, leaseOwner: null, leaseExpiresAt: null });
      expect(await deliveries().complete(row!.id, held!.fencingToken, fields)).toBe(false);
      expect(await deliveries().release(row!.id, held!.fencingToken)).toBe(false);
      expect(await claim(at(9999))).toStrictEqual([]);
    });

    it("reschedules a failed attempt: claimable again from its new due time only", async () => {
      const [row] = await enqueue(1);
      const [held] = await claim(at(10));
      expect(await deliveries().reschedule(row!.id, held!.fencingToken, { attempt: 1, dueAt: at(12), lastError: "timeout" })).toBe(true);
      expect(await deliveries().get(row!.id)).toStrictEqual({
        ...held,
        attempt: 1,
        dueAt: at(12),
        lastError: "timeout",
        leaseOwner: null,
        leaseExpiresAt: null,
      });
      expect(await claim(at(11))).toStrictEqual([]);
      expect((await claim(at(12))).map((r) => [r.id, r.attempt, r.fencingToken])).toStrictEqual([[row!.id, 1, held!.fencingToken + 1]]);
    });

    it("releases a lease unused: attempt and due time stay, and the row is claimable at once", async () => {
      const [row] = await enqueue(1);
      const [held] = await claim(at(10));
      expect(await deliveries().release(row!.id, held!.fencingToken)).toBe(true);
      expect(await deliveries().get(row!.id)).toStrictEqual({ ...held, leaseOwner: null, leaseExpiresAt: null });
      expect((await claim(at(10), "w2")).map((r) => r.leaseOwner)).toStrictEqual(["w2"]);
      expect(await deliveries().release(rid("dlv", 99), 1)).toBe(false);
    });

    it("lets only the newest claim's token land when a replaced claimant races it", async () => {
      const [row] = await enqueue(1);
      const [old] = await claim(at(10), "w1");
      const [current] = await claim(at(40), "w2");
      // Odd writers hold the current token and close the row; even ones hold the replaced token
      // and try every lease write. Exactly one close lands, and nothing of the replaced claim.
      const writes = await race(12, (i) => {
        if (i % 2) return deliveries().complete(row!.id, current!.fencingToken, { attempt: 1, closedAt: at(41), deliveredAt: at(41), lastError: `writer ${i}` });
        if (i % 3 === 0) return deliveries().release(row!.id, old!.fencingToken);
        if (i % 3 === 1) return deliveries().reschedule(row!.id, old!.fencingToken, { attempt: 9, dueAt: at(99), lastError: "stale" });
        return deliveries().complete(row!.id, old!.fencingToken, { attempt: 9, closedAt: at(99), deliveredAt: null, lastError: "stale" });
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
  });

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

  describe("task deliveries: durability", () => {
    it("keeps leases, tokens, closed rows and retries through a reopen", async () => {
      const rows = await enqueue(3);
      const held = await claim(at(10), "w1");
      await deliveries().complete(rows[0]!.id, held[0]!.fencingToken, { attempt: 1, closedAt: at(11), deliveredAt: at(11), lastError: null });
      await deliveries().reschedule(rows[1]!.id, held[1]!.fencingToken, { attempt: 1, dueAt: at(15), lastError: "responded with 503" });
      const before = await Promise.all(rows.map((r) => deliveries().get(r.id)));
      await ctx.reopen();
      expect(await Promise.all(rows.map((r) => deliveries().get(r.id)))).toStrictEqual(before);
      expect(await claim(at(14), "w2")).toStrictEqual([]);
      expect(await deliveries().release(rows[2]!.id, held[2]!.fencingToken)).toBe(true);
      // Due order: the released row kept its original due time, before the retry's.
      expect((await claim(at(15), "w2")).map((r) => [r.id, r.fencingToken])).toStrictEqual([
        [rows[2]!.id, held[2]!.fencingToken + 1],
        [rows[1]!.id, held[1]!.fencingToken + 1],
      ]);
    });
  });
}
