import type { DeliverySettlement, SettleOutcome, TaskDeliveryStore } from "../storage/types.js";

interface Pending {
  entry: DeliverySettlement;
  resolve(outcome: SettleOutcome): void;
  reject(error: unknown): void;
}

/**
 * Gathers the settlements of attempts that end close together into one `settle` batch:
 * a storage write costs its commit, not its rows, so a delivery should pay a share of one commit.
 * One batch is written at a time; what arrives meanwhile waits for the next, so the batch grows with
 * the load and the commit time instead of a fixed timer. Each caller's promise settles with its own
 * row's outcome after the batch is stored.
 */
export function createSettleQueue(store: Pick<TaskDeliveryStore, "settle">, delayMs: number) {
  let waiting: Pending[] = [];
  let armed = false;
  let writing: Promise<void> | null = null;
  let idle: (() => void)[] = [];

  const arm = (): void => {
    if (armed || writing || waiting.length === 0) return;
    armed = true;
    // setImmediate, not a microtask: answers arriving in one poll phase all land in the batch.
    if (delayMs > 0) setTimeout(write, delayMs);
    else setImmediate(write);
  };

  /** The next batch: one entry per row (a second settlement of a row waits for the batch after). */
  function take(): Pending[] {
    const ids = new Set<string>();
    const batch: Pending[] = [];
    const later: Pending[] = [];
    for (const p of waiting) (ids.has(p.entry.id) ? later : (ids.add(p.entry.id), batch)).push(p);
    waiting = later;
    return batch;
  }

  function write(): void {
    armed = false;
    const batch = take();
    writing = store.settle(batch.map((p) => p.entry)).then(
      (outcomes) => batch.forEach((p, i) => p.resolve(outcomes[i] ?? { written: false, result: false })),
      (error: unknown) => batch.forEach((p) => p.reject(error)),
    );
    void writing.finally(() => {
      writing = null;
      arm();
      if (!armed && waiting.length === 0) for (const resolve of idle.splice(0)) resolve();
    });
  }

  return {
    push(entry: DeliverySettlement): Promise<SettleOutcome> {
      return new Promise<SettleOutcome>((resolve, reject) => {
        waiting.push({ entry, resolve, reject });
        arm();
      });
    },
    /** Resolves once everything pushed so far is written. */
    drain(): Promise<void> {
      if (!armed && !writing && waiting.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idle.push(resolve));
    },
  };
}
export type SettleQueue = ReturnType<typeof createSettleQueue>;
