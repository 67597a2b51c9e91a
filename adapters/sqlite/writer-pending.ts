import { isStorageUnavailableError, StorageUnavailableError } from "../../src/storage/unavailable.js";

/** How long writes may wait for their commit before health says so (a disk that stalls, a lock held). */
export const WRITE_STALL_MS = 2_000;

interface Waiting {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  since: number;
  /** decision D39: true when the call will never run (writer-slots.ts); false when the thread runs it. */
  cancel(): boolean;
  /** Set when the timeout found the thread running the call: it is awaited one more bound. */
  running: boolean;
}

/**
 * The writes the main thread has sent to the writer thread and not yet had answered (decision
 * D37), with the bounds a frozen file system or a held lock must not break: a write unanswered
 * after `timeoutMs` fails with StorageUnavailableError (503) instead of waiting without limit, and
 * is then never run (decision D39: its slot is cancelled first; one the thread already runs is
 * awaited one more `timeoutMs`, past which it is as unknown as a connection cut after COMMIT), and `condition()`
 * says why writes cannot be trusted to succeed now, for health: a timeout or a disk failure the
 * thread reported, until a later write succeeds, or writes waiting longer than WRITE_STALL_MS.
 */
export function createPendingWrites(timeoutMs: number, now: () => number = Date.now) {
  const waiting = new Map<number, Waiting>();
  let failure: string | null = null;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = () => new StorageUnavailableError(`no commit within ${timeoutMs} ms`, "WRITER_THREAD_TIMEOUT");

  /** Fails every write older than the timeout, then sleeps until the oldest one left would be. */
  const check = (): void => {
    timer = undefined;
    const at = now();
    for (const [id, call] of waiting) {
      if (at - call.since < timeoutMs) continue;
      // decision D39: a call the thread already runs is awaited (its group commits without waiting
      // for a lock); only a thread stalled past one more bound (a disk that stopped, inside its
      // COMMIT) leaves it unknown, as a connection cut after COMMIT (D28).
      if (!call.running && !call.cancel()) {
        call.running = true;
        call.since = at;
        continue;
      }
      waiting.delete(id);
      failure = timedOut().reason;
      call.reject(timedOut());
    }
    arm();
  };
  const arm = (): void => {
    if (timer !== undefined || waiting.size === 0) return;
    const oldest = Math.min(...[...waiting.values()].map((c) => c.since));
    timer = setTimeout(check, Math.max(0, oldest + timeoutMs - now()));
    timer.unref();
  };

  return {
    get size(): number {
      return waiting.size;
    },
    add(id: number, resolve: Waiting["resolve"], reject: Waiting["reject"], cancel: Waiting["cancel"] = () => true): void {
      waiting.set(id, { resolve, reject, since: now(), cancel, running: false });
      arm();
    },
    /** Settles one call from the thread's answer; an answer for a call that timed out is dropped. */
    settle(id: number, outcome: { ok: true; value: unknown } | { ok: false; error: Error }): void {
      const call = waiting.get(id);
      waiting.delete(id);
      if (outcome.ok) failure = null;
      else if (isStorageUnavailableError(outcome.error)) failure = outcome.error.reason;
      if (call === undefined) return;
      if (outcome.ok) call.resolve(outcome.value);
      else call.reject(outcome.error);
    },
    /** Rejects every waiting call with `error` (the thread stopped, or close gave up on it). */
    rejectAll(error: () => Error): void {
      for (const call of waiting.values()) call.reject(error());
      waiting.clear();
      clearTimeout(timer);
      timer = undefined;
    },
    condition(): string | null {
      if (failure !== null) return failure;
      const at = now();
      for (const call of waiting.values()) if (at - call.since > WRITE_STALL_MS) return `writes waiting for a commit for more than ${WRITE_STALL_MS / 1000} s`;
      return null;
    },
  };
}
