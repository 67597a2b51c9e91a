import { setMaxListeners } from "node:events";
import type { TaskDeliveryService } from "../services/task-deliveries.js";
import type { ClaimedDelivery } from "../storage/types.js";
import { runAttempt, type AttemptDeps, type Outcome } from "./attempt.js";

/** Starts attempts, at most `concurrency` on the network at once, and can abandon those in flight. */
export interface Launcher {
  /**
   * Starts one attempt, unless its lease is too close to running out to start on (then it goes
   * back). `free` is called once its network part is over; the promise settles once it is recorded.
   */
  launch(claimed: ClaimedDelivery, free: () => void): Promise<Outcome>;
  /** Runs `rows` with at most `concurrency` requests on the network at once; resolves their outcomes. */
  runAll(rows: ClaimedDelivery[]): Promise<Outcome[]>;
  /** Lets the attempts in flight finish for `graceMs`; then abandons them and waits until each is recorded. */
  finish(graceMs: number): Promise<void>;
}

export function createLauncher(deps: AttemptDeps, limits: { concurrency: number; leaseMargin: number }): Launcher {
  const deliveries: TaskDeliveryService = deps.deliveries;
  const log = deliveries.logger;
  const { concurrency, leaseMargin } = limits;
  const inflight = new Map<string, Promise<Outcome>>();
  // One signal for every attempt: stop() abandons them all at once, and a controller per attempt
  // was 2 % of a delivery's CPU. Replaced when used, so a later tick() starts clean.
  // Each attempt in flight may listen on it: up to `concurrency` listeners are expected, more
  // still warn (a transport that never removes its listener).
  const abandoner = (): AbortController => {
    const controller = new AbortController();
    setMaxListeners(concurrency + 10, controller.signal);
    return controller;
  };
  let abandon = abandoner();

  function launch(claimed: ClaimedDelivery, free: () => void): Promise<Outcome> {
    const { row } = claimed;
    if (Date.parse(row.leaseExpiresAt ?? "") - deliveries.now().getTime() < leaseMargin) {
      free();
      return deliveries.release(row).then(() => "released" as const, () => "released" as const);
    }
    let freed = false;
    const once = (): void => {
      if (!freed) (freed = true), free();
    };
    const done = attemptOrRelease(claimed, once);
    inflight.set(row.id, done);
    return done;
  }

  /** One attempt in one promise (a chain of catch and finally was three more per delivery). */
  async function attemptOrRelease(claimed: ClaimedDelivery, once: () => void): Promise<Outcome> {
    const { row } = claimed;
    try {
      return await runAttempt(deps, claimed, abandon.signal, once);
    } catch (err) {
      // A storage or keyring failure: give the lease back so another pass can try, and say so.
      log.error("run task delivery attempt failed", { deliveryId: row.id, error: err instanceof Error ? err.name : typeof err });
      await deliveries.release(row).catch(() => false);
      return "released";
    } finally {
      once();
      inflight.delete(row.id);
    }
  }

  async function runAll(rows: ClaimedDelivery[]): Promise<Outcome[]> {
    const outcomes: Promise<Outcome>[] = [];
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < rows.length) {
        await new Promise<void>((resolve) => outcomes.push(launch(rows[next++]!, resolve)));
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, rows.length) }, lane));
    return Promise.all(outcomes);
  }

  async function finish(graceMs: number): Promise<void> {
    let grace: NodeJS.Timeout | undefined;
    const settled = Promise.allSettled(inflight.values());
    const finished = await Promise.race([
      settled.then(() => true),
      new Promise<false>((resolve) => (grace = setTimeout(() => resolve(false), graceMs))),
    ]);
    clearTimeout(grace);
    if (!finished) {
      const abandoned = abandon;
      abandon = abandoner();
      abandoned.abort();
      await Promise.allSettled(inflight.values());
    }
  }

  return { launch, runAll, finish };
}
