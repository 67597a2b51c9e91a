import type { TaskDeliveryService } from "../services/task-deliveries.js";
import type { ClaimedDelivery } from "../storage/types.js";
import { isStorageUnavailableError } from "../storage/unavailable.js";
import type { Launcher } from "./launcher.js";
import { ATTEMPT_PRUNE_MS, UNSETTLED_SCAN_MS, type createSweeper } from "./sweeper.js";

export interface PassLoopParts {
  deliveries: TaskDeliveryService;
  launcher: Launcher;
  sweeper: ReturnType<typeof createSweeper>;
  claim(limit: number): Promise<ClaimedDelivery[]>;
  concurrency: number;
  batchSize: number;
  pollIntervalMs: number;
}

/** Sweeps when a poll interval has passed since the last sweep; scans and prunes on their own, longer periods. */
function sweepClock(sweeper: PassLoopParts["sweeper"], pollIntervalMs: number): () => Promise<void> {
  const last = { sweep: 0, unsettledScan: 0, prune: 0 };
  return async () => {
    const now = Date.now();
    if (now - last.sweep < pollIntervalMs) return;
    last.sweep = now;
    const unsettled = now - last.unsettledScan >= UNSETTLED_SCAN_MS;
    if (unsettled) last.unsettledScan = now;
    const prune = now - last.prune >= ATTEMPT_PRUNE_MS;
    if (prune) last.prune = now;
    await sweeper.sweep({ unsettled, prune });
  };
}

/**
 * What the loop logs of failed passes. A storage that cannot be reached fails every pass until it
 * is back: that is one warning with its reason when the first pass fails and one line when a pass
 * succeeds again (an outage logged 77 error lines a host, each without a reason, found from
 * outside). Anything else is an error, each time.
 */
function passFailures(logger: TaskDeliveryService["logger"]) {
  let failed = 0;
  return {
    failed(err: unknown): void {
      if (!isStorageUnavailableError(err)) return logger.error("run task dispatcher pass failed", { error: err instanceof Error ? err.name : typeof err });
      if (failed++ === 0) logger.warn("run task dispatcher pass failed", { error: err.name, reason: err.reason });
    },
    passed(): void {
      if (failed > 0) logger.info("run task dispatcher passes again", { failedPasses: failed });
      failed = 0;
    },
  };
}

/** Claimed rows waiting for a free slot, taken from the head; the taken part is dropped now and then. */
function createRowQueue() {
  const rows: ClaimedDelivery[] = [];
  let head = 0;
  return {
    size: (): number => rows.length - head,
    push: (more: readonly ClaimedDelivery[]): void => void rows.push(...more),
    shift(): ClaimedDelivery {
      const next = rows[head++]!;
      if (head > 1024 && head * 2 > rows.length) rows.splice(0, head), (head = 0);
      return next;
    },
    /** Takes every row not yet shifted. */
    rest: (): ClaimedDelivery[] => rows.splice(head),
  };
}

/**
 * A dispatcher's background loop: a local queue of claimed rows feeds the free slots; a claim
 * refills it when it runs low. One claim at a time; a finished attempt starts the next queued row
 * at once. A pass also sweeps, at most once per poll interval.
 */
export function createPassLoop(parts: PassLoopParts) {
  const { deliveries, launcher, sweeper, claim, concurrency, batchSize, pollIntervalMs } = parts;
  const queue = createRowQueue();
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  let pass: Promise<void> | null = null;
  let again = false;
  const sweepWhenDue = sweepClock(sweeper, pollIntervalMs);
  const failures = passFailures(deliveries.logger);
  // The last claim found fewer rows than it asked for: until a poll or a started stage says
  // otherwise, a finished attempt does not claim again.
  let drained = false;

  // Requests on the network now; an attempt whose answer waits for its batched record is not one.
  let sending = 0;
  const freeSlot = (): void => {
    sending--;
    pump();
  };
  function pump(): void {
    while (running && sending < concurrency && queue.size() > 0) {
      sending++;
      void launcher.launch(queue.shift(), freeSlot);
    }
    if (running && !drained && queue.size() < concurrency) wake();
  }
  const schedule = (ms: number): void => {
    clearTimeout(timer);
    if (running) timer = setTimeout(() => ((drained = false), runPass()), ms);
  };
  // Not a zero timeout: timers are clamped to 1 ms. Attempts finishing in one turn of the event
  // loop share the pass (and its claim).
  const wake = (): void => {
    if (running && immediate === undefined) immediate = setImmediate(() => ((immediate = undefined), runPass()));
  };
  function runPass(): void {
    if (pass) return void (again = true);
    pass = (async () => {
      try {
        if (queue.size() < concurrency) {
          const want = batchSize - queue.size();
          const rows = await claim(want);
          drained = rows.length < want;
          queue.push(rows);
        }
        pump();
        await sweepWhenDue();
        failures.passed();
      } catch (err) {
        failures.failed(err);
      }
    })().finally(() => {
      pass = null;
      schedule(pollIntervalMs);
      if (again) wake();
      again = false;
    });
  }

  return {
    /** Starts passing: the first pass at once. */
    start: (): void => ((running = true), schedule(0)),
    /** Something may be due (a started stage, another process's wake-up, a retry asked for): claim again. */
    woken: (): void => ((drained = false), wake()),
    /** Stops scheduling passes; nothing new starts from here on. */
    halt(): void {
      running = false;
      clearTimeout(timer);
      clearImmediate(immediate);
    },
    /** Waits for the pass under way, then takes the claimed rows never sent out of the queue. */
    async unsent(): Promise<ClaimedDelivery[]> {
      await pass;
      return queue.rest();
    },
    isRunning: (): boolean => running,
  };
}
