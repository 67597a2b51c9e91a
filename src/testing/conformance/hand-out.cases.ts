import { describe, expect, it } from "vitest";
import type { DeliveryAttemptRecord } from "../../schemas/delivery-attempts.js";
import type { DeliverySettlement } from "../../storage/types.js";
import type { ConformanceContext } from "./context.js";
import { attemptRecord } from "./delivery-attempts.cases.js";
import { at } from "./fixtures.js";
import { LEASE, outbox, WINDOW } from "./outbox-support.js";
import { rid } from "./run-task-fixtures.js";

const POOL = "apool-AAAAAAAAAAAAAAAA";
const AGENT = "agent-AAAAAAAAAAAAAAAA";
const ALL = { offset: 0, limit: 100 };
const NO_REPORT = (name: string) => `no report from agent ${name}: the integration may have received the request`;

/** The `under-way` record of attempt `number` of pool row 1, handed to agent "doomed" at `second`. */
const underWay = (number: number, second: number, overrides: Partial<DeliveryAttemptRecord> = {}): DeliveryAttemptRecord =>
  attemptRecord({
    id: rid("tda", number),
    number,
    startedAt: at(second),
    durationMs: 3,
    outcome: "under-way",
    status: null,
    errorCode: null,
    detail: "handed to agent doomed; no report yet",
    excerpt: null,
    excerptTruncated: false,
    agentId: AGENT,
    agentName: "doomed",
    ...overrides,
  });

/**
 * decision D58: a job handed to an agent is an attempt record from the moment it is handed (a
 * `hand-out` settlement), completed in place by its end, or closed as `no-report` by the claim
 * that re-takes its row (its host died, or gave the row back) before the next attempt.
 */
export function describeHandOutCases(ctx: ConformanceContext): void {
  const { deliveries, enqueue } = outbox(ctx);
  const claimPool = async (now: string, owner = "w1") =>
    (await deliveries().claim({ now, owner, leaseMs: LEASE, limit: 10, window: WINDOW, pools: [POOL] })).map((c) => c.row);
  const attempts = (resultId = rid("taskrs", 1)) => ctx.storage.deliveryAttempts.list(resultId, ALL);
  const handOut = async (row: { id: string; fencingToken: number }, record: DeliveryAttemptRecord): Promise<boolean> =>
    (await deliveries().settle([{ id: row.id, fencingToken: row.fencingToken, type: "hand-out", record }]))[0]!.written;

  describe("task deliveries: a job handed to an agent (decision D58)", () => {
    it("stores a hand-out's under-way record at once, leaving the row and its lease as they were; a stale token stores nothing", async () => {
      await enqueue(1, () => ({ agentPoolId: POOL }));
      const [held] = await claimPool(at(10));
      expect(await handOut({ id: held!.id, fencingToken: held!.fencingToken - 1 }, underWay(1, 10))).toBe(false);
      expect(await attempts()).toStrictEqual({ items: [], total: 0 });
      expect(await handOut(held!, underWay(1, 10))).toBe(true);
      expect(await attempts()).toStrictEqual({ items: [underWay(1, 10)], total: 1 });
      expect(await deliveries().get(held!.id)).toStrictEqual({ ...held!, payload: "sealed-0" });
      // Still leased: no other claim takes it.
      expect(await claimPool(at(11), "w2")).toStrictEqual([]);
    });

    it("completes the under-way record in place with its attempt's end: one record, its number", async () => {
      await enqueue(1, () => ({ agentPoolId: POOL }));
      const [held] = await claimPool(at(10));
      await handOut(held!, underWay(1, 10));
      const answered = underWay(1, 10, { durationMs: 900, outcome: "answered", status: 200, detail: "responded with 200", excerpt: "ok" });
      const close: DeliverySettlement = { id: held!.id, fencingToken: held!.fencingToken, type: "close", fields: { attempt: 1, closedAt: at(11), deliveredAt: at(11), lastError: null }, record: answered };
      expect((await deliveries().settle([close]))[0]!.written).toBe(true);
      expect(await attempts()).toStrictEqual({ items: [answered], total: 1 });
    });

    it("closes the attempt an agent never reported as no-report in the claim that re-takes the row, before the next attempt", async () => {
      await enqueue(1, () => ({ agentPoolId: POOL }));
      const [first] = await claimPool(at(10));
      await handOut(first!, underWay(1, 10));
      // The host died: its lease runs out, another host's claim takes the row.
      const [again] = await claimPool(at(45), "w2");
      const detail = NO_REPORT("doomed");
      expect(again).toMatchObject({ id: first!.id, attempt: 1, lastError: detail, leaseOwner: "w2", fencingToken: first!.fencingToken + 1 });
      expect(await deliveries().get(first!.id)).toMatchObject({ attempt: 1, lastError: detail });
      const closed = underWay(1, 10, { outcome: "failed", errorCode: "no-report", detail, durationMs: 35_000 });
      expect(await attempts()).toStrictEqual({ items: [closed], total: 1 });
      // The next attempt is number 2; its claim, once its own lease runs out, closes it too (by id when unnamed).
      await handOut(again!, underWay(2, 45, { agentName: null, detail: `handed to agent ${AGENT}; no report yet` }));
      const [third] = await claimPool(at(80), "w3");
      expect(third).toMatchObject({ attempt: 2, lastError: NO_REPORT(AGENT) });
      expect((await attempts()).items.map((a) => [a.number, a.outcome, a.errorCode, a.detail])).toStrictEqual([
        [2, "failed", "no-report", NO_REPORT(AGENT)],
        [1, "failed", "no-report", detail],
      ]);
    });

    it("closes it too when its host gave the row back, and leaves an ended attempt and other rows alone", async () => {
      const rows = await enqueue(3, () => ({ agentPoolId: POOL }));
      const held = await claimPool(at(10));
      await handOut(held[0]!, underWay(1, 10, { taskResultId: rows[0]!.taskResultId, deliveryId: rows[0]!.id }));
      const ended = underWay(1, 10, { id: rid("tda", 7), taskResultId: rows[1]!.taskResultId, deliveryId: rows[1]!.id, outcome: "failed", errorCode: "timeout", detail: "timed out" });
      await handOut(held[1]!, underWay(1, 10, { id: rid("tda", 7), taskResultId: rows[1]!.taskResultId, deliveryId: rows[1]!.id }));
      const outcomes = await deliveries().settle([
        { id: held[0]!.id, fencingToken: held[0]!.fencingToken, type: "release" },
        { id: held[1]!.id, fencingToken: held[1]!.fencingToken, type: "retry", fields: { attempt: 1, dueAt: at(12), lastError: "timed out" }, record: ended },
        { id: held[2]!.id, fencingToken: held[2]!.fencingToken, type: "release" },
      ]);
      expect(outcomes.map((o) => o.written)).toStrictEqual([true, true, true]);
      const again = await claimPool(at(12), "w2");
      expect(again.map((r) => [r.id, r.attempt, r.lastError]).sort()).toStrictEqual([
        [rows[0]!.id, 1, NO_REPORT("doomed")],
        [rows[1]!.id, 1, "timed out"],
        [rows[2]!.id, 0, null],
      ]);
      expect((await attempts(rows[0]!.taskResultId)).items.map((a) => [a.outcome, a.durationMs])).toStrictEqual([["failed", 2_000]]);
      expect((await attempts(rows[1]!.taskResultId)).items).toStrictEqual([ended]);
      expect(await attempts(rows[2]!.taskResultId)).toStrictEqual({ items: [], total: 0 });
    });
  });
}
