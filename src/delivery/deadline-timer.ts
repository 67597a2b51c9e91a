/**
 * One timer for many deadlines: every request of an egress registers its budget here instead of
 * arming a timer of its own (no per-delivery timers). The timer is armed for the
 * earliest pending deadline; as requests with one budget arrive in order, a new one never moves
 * it, so steady traffic re-arms it once per expiry check, not once per request.
 */
export function createDeadlineTimer() {
  const pending = new Set<{ at: number; fire: () => void }>();
  let timer: NodeJS.Timeout | undefined;
  let wakeAt = Number.POSITIVE_INFINITY;

  const arm = (at: number): void => {
    clearTimeout(timer);
    wakeAt = at;
    timer = setTimeout(tick, Math.max(0, Math.ceil(at - performance.now())));
  };

  function tick(): void {
    timer = undefined;
    wakeAt = Number.POSITIVE_INFINITY;
    // Timers fire on the event loop's millisecond clock, which may run a fraction behind
    // performance.now(): a deadline within a millisecond is due now, not after another wake.
    const now = performance.now() + 1;
    let next = Number.POSITIVE_INFINITY;
    for (const entry of pending) {
      if (entry.at <= now) {
        pending.delete(entry);
        entry.fire();
      } else if (entry.at < next) next = entry.at;
    }
    if (next !== Number.POSITIVE_INFINITY) arm(next);
  }

  return {
    /** Calls `fire` once `ms` have passed, unless the returned cancel function runs first. */
    add(ms: number, fire: () => void): () => void {
      const entry = { at: performance.now() + ms, fire };
      pending.add(entry);
      if (entry.at < wakeAt) arm(entry.at);
      return () => {
        pending.delete(entry);
        if (pending.size === 0) {
          clearTimeout(timer);
          timer = undefined;
          wakeAt = Number.POSITIVE_INFINITY;
        }
      };
    },
  };
}
