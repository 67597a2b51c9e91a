import { describe, expect, it } from "vitest";
import { race, type ConformanceContext } from "./context.js";
import { attemptRecord } from "./delivery-attempts.cases.js";
import { at } from "./fixtures.js";
import { LEASE, outbox, PENDING, WINDOW } from "./outbox-support.js";
import { delivery, result, rid, run, runTask, stage, started } from "./run-task-fixtures.js";

const P1 = "apool-AAAAAAAAAAAAAAAA";
const P2 = "apool-BBBBBBBBBBBBBBBB";
const P3 = "apool-CCCCCCCCCCCCCCCC";

/** What a pool's delivery writes besides its row: the window its stage start opens, the agent an attempt names. */
function poolRecordCases(ctx: ConformanceContext): void {
  const { deliveries, enqueue, claimRows } = outbox(ctx);
    it("writes the deadline window a stage start gives a result, which a later claim keeps", async () => {
      const r = result({ id: rid("taskrs", 1), agentPoolId: null });
      await ctx.storage.runTasks.insert(runTask());
      await ctx.storage.runs.create(run(), [stage()], [r]);
      const next = { ...r, accessTokenDigest: "digest-1", agentPoolId: P1, deadlineAt: at(100), deadlineMaxAt: at(200), version: 2 };
      const row = delivery({ taskResultId: r.id, agentPoolId: P1 });
      expect(await ctx.storage.taskStages.start(started(stage()), PENDING, [{ next, expected: PENDING }], [row])).not.toBeNull();
      expect(await ctx.storage.taskResults.get(r.id)).toMatchObject({ agentPoolId: P1, deadlineAt: at(100), deadlineMaxAt: at(200), version: 2 });
      const [claimed] = await deliveries().claim({ now: at(10), owner: "w1", leaseMs: LEASE, limit: 1, window: WINDOW, pools: [P1] });
      expect(claimed!.result).toMatchObject({ deadlineAt: at(100), version: 2 });
    });

    it("keeps the agent an attempt names, and reads an attempt written without one as null", async () => {
      await enqueue(2);
      const [a, b] = await claimRows(at(10), "w1", 10);
      const { agentId: _, ...bare } = attemptRecord({ id: rid("tda", 2), taskResultId: b!.taskResultId, deliveryId: b!.id });
      const outcomes = await deliveries().settle([
        { id: a!.id, fencingToken: a!.fencingToken, type: "retry", fields: { attempt: 1, dueAt: at(20), lastError: "x" }, record: attemptRecord({ agentId: "agent-AAAAAAAAAAAAAAAA" }) },
        { id: b!.id, fencingToken: b!.fencingToken, type: "retry", fields: { attempt: 1, dueAt: at(20), lastError: "x" }, record: bare },
      ]);
      expect(outcomes.map((o) => o.written)).toStrictEqual([true, true]);
      const page = { offset: 0, limit: 10 };
      expect((await ctx.storage.deliveryAttempts.list(a!.taskResultId, page)).items.map((x) => x.agentId)).toStrictEqual(["agent-AAAAAAAAAAAAAAAA"]);
      expect((await ctx.storage.deliveryAttempts.list(b!.taskResultId, page)).items.map((x) => x.agentId)).toStrictEqual([null]);
    });
}

/**
 * decision D34: the outbox rows of a run task bound to an agent pool carry the pool, and a claim
 * takes either the platform's own rows (no pool: the direct dispatcher, and every caller written
 * before pools) or the rows of the pools it names (an agent dispatcher), never both kinds.
 */
export function describeDeliveryPoolCases(ctx: ConformanceContext): void {
  const { deliveries, enqueue, claimRows } = outbox(ctx);
  const claimIds = async (now: string, pools: readonly string[] | null | undefined, limit = 10, owner = "w1"): Promise<string[]> =>
    (await deliveries().claim({ now, owner, leaseMs: LEASE, limit, window: WINDOW, ...(pools === undefined ? {} : { pools }) })).map((c) => c.row.id);
  // Rows 1..6 due at 1..6: 1 and 4 direct, 2 and 5 of P1, 3 and 6 of P2.
  const mixed = () => enqueue(6, (i) => ({ dueAt: at(i + 1), agentPoolId: [null, P1, P2][i % 3] }));
  const ids = (...n: number[]): string[] => n.map((i) => rid("dlv", i));

  describe("task deliveries: agent pools (decision D34)", () => {
    it("stores each row's pool, and a row written without one reads as null", async () => {
      const rows = await enqueue(2, (i) => (i === 0 ? { agentPoolId: P1 } : {}));
      const { agentPoolId: _, ...bare } = rows[1]!;
      expect((await deliveries().get(rows[0]!.id))?.agentPoolId).toBe(P1);
      expect((await deliveries().listByResult(rows[1]!.taskResultId))[0]?.agentPoolId).toBeNull();
      expect(bare).not.toHaveProperty("agentPoolId");
    });

    it("claims only rows without a pool when the claim names none (absent or null)", async () => {
      await mixed();
      expect(await claimIds(at(10), undefined, 1)).toStrictEqual(ids(1));
      expect(await claimIds(at(10), null)).toStrictEqual(ids(4));
      expect(await claimIds(at(10), null)).toStrictEqual([]);
    });

    it("claims only the named pools' rows, in due order across the pools, and none for an empty list", async () => {
      await mixed();
      expect(await claimIds(at(10), [])).toStrictEqual([]);
      expect(await claimIds(at(10), [P3])).toStrictEqual([]);
      expect(await claimIds(at(10), [P2, P1], 3)).toStrictEqual(ids(2, 3, 5));
      // What the limit left is claimable at once; the direct rows were never touched.
      expect(await claimIds(at(10), [P1, P2])).toStrictEqual(ids(6));
      for (const id of ids(1, 4)) expect((await deliveries().get(id))).toMatchObject({ leaseOwner: null, fencingToken: 0 });
      expect(await claimIds(at(10), null)).toStrictEqual(ids(1, 4));
    });

    it("honours due times and leases within a pool as for direct rows", async () => {
      await mixed();
      expect(await claimIds(at(2), [P1])).toStrictEqual(ids(2));
      expect(await claimIds(at(10), [P1])).toStrictEqual(ids(5));
      expect(await claimIds(at(10), [P1])).toStrictEqual([]);
      // Leases run out after LEASE: both rows come back to the next claim of the pool.
      expect(await claimIds(new Date(Date.parse(at(10)) + LEASE).toISOString(), [P1], 10, "w2")).toStrictEqual(ids(2, 5));
    });

    poolRecordCases(ctx);

    it("counts each pool's open rows due and not leased, with the oldest due time (optional waitingByPool)", async ({ skip }) => {
      if (!deliveries().waitingByPool) return skip("the adapter offers no waitingByPool");
      expect(await deliveries().waitingByPool!(at(10), 10)).toStrictEqual([]);
      await mixed();
      // P1's row 2 is leased, P2's row 6 is not due yet at at(5); direct rows are never counted.
      expect(await claimIds(at(2), [P1], 1)).toStrictEqual(ids(2));
      expect(await deliveries().waitingByPool!(at(5), 10)).toStrictEqual([
        { agentPoolId: P1, due: 1, oldestDueAt: at(5) },
        { agentPoolId: P2, due: 1, oldestDueAt: at(3) },
      ]);
      expect(await deliveries().waitingByPool!(at(10), 1)).toStrictEqual([{ agentPoolId: P1, due: 1, oldestDueAt: at(5) }]);
    });

    it("hands each row to exactly one of racing direct and pool claimants, each of its own kind", async () => {
      await enqueue(9, (i) => ({ dueAt: at(1), agentPoolId: [null, P1, P2][i % 3] }));
      const claims = await race(9, (i) => claimIds(at(10), [null, [P1], [P1, P2]][i % 3], 2, `w${i}`));
      const all = claims.flat();
      expect(new Set(all).size).toBe(all.length);
      for (const [i, got] of claims.entries()) {
        for (const id of got) {
          const pool = (await deliveries().get(id))?.agentPoolId ?? null;
          expect(i % 3 === 0 ? pool === null : i % 3 === 1 ? pool === P1 : pool !== null).toBe(true);
        }
      }
    });
  });
}
