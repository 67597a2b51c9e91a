import { describe, expect, it } from "vitest";
import { race, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";
import { outbox } from "./outbox-support.js";
import { rid } from "./run-task-fixtures.js";

/** `TaskDeliveryStore.expedite` (decision D31, retry now; D16 guards it). */
export function describeRetryNowCases(ctx: ConformanceContext): void {
  const { deliveries, enqueue, claimRows, retry, close } = outbox(ctx);

  /** One result whose first attempt failed at second 10 (window to second 610) and retries at `dueAt`. */
  async function retrying(dueAt = at(100)) {
    const [row] = await enqueue(1);
    const [held] = await claimRows(at(10));
    expect(await retry(row!, held!.fencingToken, { attempt: 1, dueAt, lastError: "responded with 503" })).toBe(true);
    const stored = (await deliveries().get(row!.id))!;
    return { row: row!, stored, token: held!.fencingToken };
  }

  describe("task deliveries: retry now", () => {
    it("makes a retrying result's next attempt due now and changes nothing else", async () => {
      const { row, stored } = await retrying();
      expect(await deliveries().expedite(row.taskResultId, at(20))).toStrictEqual({ ok: true });
      expect(await deliveries().get(row.id)).toStrictEqual({ ...stored, dueAt: at(20) });
      expect((await claimRows(at(20))).map((r) => [r.id, r.attempt])).toStrictEqual([[row.id, 1]]);
    });

    it("leaves an earlier due time as it is", async () => {
      const { row, stored } = await retrying(at(15));
      expect(await deliveries().expedite(row.taskResultId, at(20))).toStrictEqual({ ok: true });
      expect(await deliveries().get(row.id)).toStrictEqual(stored);
    });

    it("refuses a result whose request has not been tried yet, or whose row is closed, writing nothing", async () => {
      const [fresh] = await enqueue(1);
      expect(await deliveries().expedite(fresh!.taskResultId, at(5))).toStrictEqual({ ok: false, reason: "not-retrying" });
      const [held] = await claimRows(at(10));
      expect(await deliveries().expedite(fresh!.taskResultId, at(10))).toStrictEqual({ ok: false, reason: "not-retrying" });
      await close(fresh!, held!.fencingToken, { attempt: 1, closedAt: at(11), deliveredAt: null, lastError: "x" });
      const closed = await deliveries().get(fresh!.id);
      expect(await deliveries().expedite(fresh!.taskResultId, at(12))).toStrictEqual({ ok: false, reason: "not-retrying" });
      expect(await deliveries().get(fresh!.id)).toStrictEqual(closed);
      expect(await deliveries().expedite(rid("taskrs", 99), at(12))).toStrictEqual({ ok: false, reason: "not-retrying" });
    });

    it("refuses a result that is no longer pending or whose deadline has come (D16)", async () => {
      const { row, stored } = await retrying();
      expect(await deliveries().expedite(row.taskResultId, at(610))).toStrictEqual({ ok: false, reason: "not-retrying" });
      const result = (await ctx.storage.taskResults.get(row.taskResultId))!;
      const running = { ...result, status: "running" as const, version: result.version + 1 };
      expect(await ctx.storage.taskResults.transition(result.id, { statuses: ["pending"], version: result.version }, running)).not.toBeNull();
      expect(await deliveries().expedite(row.taskResultId, at(20))).toStrictEqual({ ok: false, reason: "not-retrying" });
      expect(await deliveries().get(row.id)).toStrictEqual(stored);
    });

    it("refuses a row a claim holds (an attempt under way) until its lease runs out", async () => {
      const { row } = await retrying(at(20));
      const [held] = await claimRows(at(20));
      expect(await deliveries().expedite(row.taskResultId, at(21))).toStrictEqual({ ok: false, reason: "leased" });
      expect(await deliveries().get(row.id)).toStrictEqual(held);
      expect(await deliveries().expedite(row.taskResultId, at(50))).toStrictEqual({ ok: true });
    });

    it("never lets racing claims and retry-nows hand the row out twice", async () => {
      const { row } = await retrying();
      const now = at(20);
      const outcomes = await Promise.all([
        race(5, () => deliveries().expedite(row.taskResultId, now)),
        race(5, (i) => claimRows(now, `w${i}`)),
      ]);
      const claimed = outcomes[1].flat();
      expect(claimed.length).toBeLessThanOrEqual(1);
      const stored = (await deliveries().get(row.id))!;
      if (claimed.length === 1) {
        expect(stored).toStrictEqual(claimed[0]);
        expect(stored.dueAt).toBe(now);
      } else {
        // Every claim ran before every move: the row waits, due now, for the next claim.
        expect(outcomes[0].every((o) => o.ok)).toBe(true);
        expect({ dueAt: stored.dueAt, leaseOwner: stored.leaseOwner }).toStrictEqual({ dueAt: now, leaseOwner: null });
      }
      expect((await claimRows(now, "late")).length).toBe(claimed.length === 1 ? 0 : 1);
    });
  });
}
