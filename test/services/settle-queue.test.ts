import { describe, expect, it } from "vitest";
import { createSettleQueue } from "../../src/services/settle-queue.js";
import { assertDistinctIds } from "../../src/storage/outbox-rules.js";
import type { DeliverySettlement, SettleOutcome } from "../../src/storage/types.js";

// The settle queue under interleavings: settlements of one turn share one
// write, a row named twice waits for the next write, and `drain` waits for every write under way.

/** A store whose writes wait until the test lets each one finish, in order; it keeps the contract's rule on repeated rows. */
function heldStore() {
  const writes: { batch: string[]; finish(): void; fail(error: Error): void }[] = [];
  const log: string[] = [];
  const store = {
    settle: (batch: readonly DeliverySettlement[]) =>
      new Promise<SettleOutcome[]>((resolve, reject) => {
        assertDistinctIds(batch);
        const ids = batch.map((e) => `${e.type} ${e.id}`);
        writes.push({
          batch: ids,
          finish: () => (log.push(`stored ${ids.join(", ")}`), resolve(batch.map(() => ({ written: true, result: false })))),
          fail: (error) => reject(error),
        });
      }),
  };
  return { store, writes, log };
}

const release = (id: string): DeliverySettlement => ({ id, fencingToken: 1, type: "release" });
const retry = (id: string): DeliverySettlement => ({ id, fencingToken: 1, type: "retry", fields: { attempt: 1, dueAt: "2026-01-01T00:00:01.000Z", lastError: "timeout" } });
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** Waits, turn by turn, until the store has been asked for `n` writes. */
async function writesStarted(writes: unknown[], n: number): Promise<void> {
  for (let turns = 0; writes.length < n; turns++) {
    if (turns > 100) throw new Error(`expected ${n} writes, saw ${writes.length}`);
    await nextTurn();
  }
}

describe("settle queue", () => {
  it("writes the settlements of one turn together, and a second one of the same row in the write after, in order", async () => {
    const { store, writes, log } = heldStore();
    const queue = createSettleQueue(store, 0);
    const outcomes = [queue.push(retry("dlv-a")), queue.push(release("dlv-b")), queue.push(release("dlv-a"))];
    await writesStarted(writes, 1);
    expect(writes[0]!.batch).toStrictEqual(["retry dlv-a", "release dlv-b"]);
    writes[0]!.finish();
    await writesStarted(writes, 2);
    expect(writes[1]!.batch).toStrictEqual(["release dlv-a"]);
    writes[1]!.finish();
    expect(await Promise.all(outcomes)).toStrictEqual([1, 2, 3].map(() => ({ written: true, result: false })));
    expect(log).toStrictEqual(["stored retry dlv-a, release dlv-b", "stored release dlv-a"]);
  });

  it("drains only once the write under way and what arrived during it are stored", async () => {
    const { store, writes, log } = heldStore();
    const queue = createSettleQueue(store, 0);
    const first = queue.push(release("dlv-a"));
    await writesStarted(writes, 1);
    // A write is under way and nothing else waits: drain must still wait for it.
    const drained = queue.drain().then(() => log.push("drained"));
    const second = queue.push(release("dlv-b"));
    await nextTurn();
    writes[0]!.finish();
    await first;
    await writesStarted(writes, 2);
    expect(log).toStrictEqual(["stored release dlv-a"]);
    writes[1]!.finish();
    await Promise.all([drained, second]);
    expect(log).toStrictEqual(["stored release dlv-a", "stored release dlv-b", "drained"]);
  });

  it("drains after a write under way when nothing else arrives", async () => {
    const { store, writes, log } = heldStore();
    const queue = createSettleQueue(store, 0);
    const pushed = queue.push(release("dlv-a"));
    await writesStarted(writes, 1);
    const drained = queue.drain().then(() => log.push("drained"));
    await nextTurn();
    expect(log).toStrictEqual([]);
    writes[0]!.finish();
    await Promise.all([pushed, drained]);
    expect(log).toStrictEqual(["stored release dlv-a", "drained"]);
  });

  it("fails only the batch whose write failed; the next batch is written and drain resolves", async () => {
    const { store, writes, log } = heldStore();
    const queue = createSettleQueue(store, 0);
    const lost = queue.push(release("dlv-a"));
    await writesStarted(writes, 1);
    const kept = queue.push(release("dlv-a"));
    writes[0]!.fail(new Error("connection lost"));
    await expect(lost).rejects.toThrow("connection lost");
    await writesStarted(writes, 2);
    writes[1]!.finish();
    expect(await kept).toStrictEqual({ written: true, result: false });
    await queue.drain();
    expect(log).toStrictEqual(["stored release dlv-a"]);
  });
});
