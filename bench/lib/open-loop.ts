import { setTimeout as sleep } from "node:timers/promises";

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between the bench's processes. */
export const wallNow = (): number => performance.timeOrigin + performance.now();

export interface OpenLoop {
  /** Largest delay between an event's scheduled time and its call, ms (the scheduler's own lag). */
  maxLagMs: number;
  /** Calls that rejected, and the first reason. */
  failures: number;
  firstFailure?: string;
}

/**
 * A fixed-rate open-loop schedule: event i is due at `start + i * 1000 / rate` (wall clock) and
 * `fire(i, due)` is called as soon as it is due, whether or not earlier calls have settled, so a
 * slow answer never delays the next start. Callers measure latency from `due`, not from the call:
 * a stalled process then shows in the figures instead of silently starting fewer events
 * (coordinated omission). Resolves once all `count` calls have settled.
 */
export async function openLoop(options: { rate: number; count: number; start: number }, fire: (i: number, due: number) => Promise<unknown>): Promise<OpenLoop> {
  const interval = 1000 / options.rate;
  const out: OpenLoop = { maxLagMs: 0, failures: 0 };
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < options.count; ) {
    const wait = options.start + i * interval - wallNow();
    if (wait > 0) await sleep(wait);
    // Everything due by now, in order: after a stall the backlog starts at once.
    for (const t = wallNow(); i < options.count && options.start + i * interval <= t; i++) {
      const due = options.start + i * interval;
      out.maxLagMs = Math.max(out.maxLagMs, t - due);
      pending.push(
        fire(i, due).catch((error: unknown) => {
          if (out.failures++ === 0) out.firstFailure = error instanceof Error ? error.message : String(error);
        }),
      );
    }
  }
  await Promise.all(pending);
  return out;
}
