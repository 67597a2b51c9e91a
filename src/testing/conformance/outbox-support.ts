import { expect } from "vitest";
import type { TaskDeliveryRecord, TaskResultRecord } from "../../schemas/run-task-records.js";
import type { ClaimedDelivery, DeliveryCompletion, DeliveryRetry, SettleOutcome } from "../../storage/types.js";
import type { ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";
import { delivery, result, rid, run, runTask, stage, started } from "./run-task-fixtures.js";

export const PENDING = { statuses: ["pending"] as const, version: 1 };
export const LEASE = 30_000;
/** The fixed D16 window the cases claim with: 600 s, no cap. */
export const WINDOW = { ms: 600_000, maxMs: null };

/** Outbox helpers over the current storage of a conformance case. */
export function outbox(ctx: ConformanceContext) {
  const deliveries = () => ctx.storage.taskDeliveries;

  /** A started stage whose `count` results each got one delivery; `shape(i)` adjusts row i. */
  async function enqueue(count: number, shape: (i: number) => Partial<TaskDeliveryRecord> = () => ({})): Promise<TaskDeliveryRecord[]> {
    const results = Array.from({ length: count }, (_, i) => result({ id: rid("taskrs", i + 1), position: i }));
    await ctx.storage.runTasks.insert(runTask());
    await ctx.storage.runs.create(run(), [stage()], results);
    const rows = results.map((r, i) => delivery({ id: rid("dlv", i + 1), taskResultId: r.id, payload: `sealed-${i}`, ...shape(i) }));
    const writes = results.map((r, i) => ({ next: { ...r, accessTokenDigest: `digest-${i}`, version: 2 }, expected: PENDING }));
    expect(await ctx.storage.taskStages.start(started(stage()), PENDING, writes, rows)).not.toBeNull();
    return rows;
  }

  const claim = (now: string, owner = "w1", limit = 10, leaseMs = LEASE, window: { ms: number; maxMs: number | null } = WINDOW) =>
    deliveries().claim({ now, owner, leaseMs, limit, window });
  /** The claimed rows only (what most cases look at). */
  const claimRows = async (...args: Parameters<typeof claim>): Promise<TaskDeliveryRecord[]> => (await claim(...args)).map((c) => c.row);

  const one = async (entry: Parameters<ReturnType<typeof deliveries>["settle"]>[0][number]): Promise<boolean> =>
    ((await deliveries().settle([entry])) as SettleOutcome[])[0]!.written;
  const close = (row: { id: string }, token: number, fields: DeliveryCompletion) => one({ id: row.id, fencingToken: token, type: "close", fields });
  const retry = (row: { id: string }, token: number, fields: DeliveryRetry) => one({ id: row.id, fencingToken: token, type: "retry", fields });
  const release = (row: { id: string }, token: number) => one({ id: row.id, fencingToken: token, type: "release" });

  const leased = (row: TaskDeliveryRecord, owner: string, now: string, token: number): TaskDeliveryRecord => ({
    ...row,
    leaseOwner: owner,
    leaseExpiresAt: new Date(Date.parse(now) + LEASE).toISOString(),
    fencingToken: token,
  });
  const resultOf = (id: string): Promise<TaskResultRecord | null> => ctx.storage.taskResults.get(id);
  return { deliveries, enqueue, claim, claimRows, close, retry, release, leased, resultOf };
}

export const delivered = (n: number): DeliveryCompletion => ({ attempt: 1, closedAt: at(n), deliveredAt: at(n), lastError: null });
export type Claimed = ClaimedDelivery;
