/**
 * The outbox dispatcher (decisions D15, D16): claims due run task requests in batches with a lease
 * and a fencing token, keeps them in a local queue, sends them through the SSRF-guarded transport
 * at most `concurrency` at a time, records the answers in batched writes, schedules retries with
 * backoff, and sweeps results past their deadline. Any number of dispatchers may run against one
 * storage: a row is held by one of them at a time, and a dispatcher that dies holding rows loses
 * them when its lease runs out.
 */
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { hostname } from "node:os";
import type { StageStatusEvent } from "../services/run-task-events.js";
import type { RunTaskSettings } from "../services/run-task-settings.js";
import type { TaskDeliveryService } from "../services/task-deliveries.js";
import type { ClaimedDelivery, StopListening } from "../storage/types.js";
import { runAttempt, type AttemptDeps, type DispatcherFailpoint, type Outcome } from "./attempt.js";
import { createAttemptTelemetry } from "./attempt-telemetry.js";
import { createEgress, type HttpTransport, type Resolver } from "./egress.js";
import { ATTEMPT_PRUNE_MS, createSweeper, UNSETTLED_SCAN_MS } from "./sweeper.js";
import { observeOutbox } from "../telemetry/metrics.js";
import { subscribeWakeups } from "./wakeups.js";

export { DISPATCHER_FAILPOINTS, type DispatcherFailpoint } from "./attempt.js";

/** Options of {@link createDispatcher}. */
export interface DispatcherOptions {
  /** Where requests go out. Default: the runplane's transport, or a dedicated one when `egress` is given. */
  transport?: HttpTransport;
  /** Builds a dedicated SSRF-guarded transport (`createEgress`) with this allowlist and resolver; closed by `stop`. */
  egress?: { allow?: readonly string[]; resolve?: Resolver };
  /** Lease holder id stored on claimed rows. Default `<hostname>:<pid>:<random>`. */
  owner?: string;
  /**
   * How long a claim lasts, in ms. Default 30 s: longer than one attempt (10 s timeout) plus its
   * writes. A dispatcher that dies holding rows loses them after this; another one picks them up
   * within `leaseMs + pollIntervalMs`. A claimed row whose lease has less than half of this (at
   * most 15 s) left when a slot frees is given back unsent rather than risk a second sender.
   */
  leaseMs?: number;
  /**
   * Attempts in flight at once. Default 32 ({@link DEFAULT_CONCURRENCY}): attempts wait on the
   * network (up to 10 s each), so a few slow integrations must not hold every slot.
   */
  concurrency?: number;
  /**
   * Rows one claim leases into the local queue. Default 4 x `concurrency`, at least 128: a claim
   * costs a write, so one claim feeds many attempts; the queue is refilled when it runs low.
   */
  batchSize?: number;
  /**
   * Real-time pause between polls when nothing is due, and between sweeps, in ms. Default 1 s.
   * Stages started through the same runplane instance wake the dispatcher at once, and so do the
   * storage's wake-ups from other processes when it offers them (`Storage.listen`, PostgreSQL);
   * the poll stays the authority: it finds retries coming due and anything a wake-up missed.
   */
  pollIntervalMs?: number;
  /** Jitter source in [0, 1). Default `Math.random`. */
  random?: () => number;
  /** Test hook called at each named failpoint. */
  failpoint?: (name: DispatcherFailpoint) => void | Promise<void>;
}

/** What one `tick` did. */
export interface TickReport {
  /** Rows claimed and prepared (whether or not a request went out). */
  attempted: number;
  delivered: number;
  failed: number;
  /** Results the sweep moved to `errored` or `unreachable`. */
  expired: number;
}

export interface Dispatcher {
  /**
   * Starts polling in the background and, when the storage offers them (`Storage.listen`), listening
   * for wake-ups from other processes, with one catch-up pass once listening. Idempotent.
   */
  start(): void;
  /**
   * Stops polling and listening. Attempts in flight may finish for `graceMs` (default 10 s); then they are
   * abandoned and their rows released, as are claimed rows not yet sent, so no lease stays held.
   * Closes a transport it created.
   */
  stop(options?: { graceMs?: number }): Promise<void>;
  /** Whether `start` was called and `stop` not yet (for health checks). */
  isRunning(): boolean;
  /** Claims and sends every due row once, then sweeps; resolves when all of it is done. For tests and hosts driving their own loop. */
  tick(): Promise<TickReport>;
}

/** The parts of a runplane instance the dispatcher uses; `createRunplane(...)` has them. */
export interface DispatcherHost {
  runTasks: {
    deliveries: TaskDeliveryService;
    settings: RunTaskSettings;
    /** When present, a stage reaching `running` (its requests just enqueued) starts a pass at once. */
    on?: (event: "stage-status", listener: (event: StageStatusEvent) => void) => () => void;
    /** Preferred to `on`: the same for this instance's own stages only (other processes' come as wake-ups). */
    onOwn?: (event: "stage-status", listener: (event: StageStatusEvent) => void) => () => void;
  };
  transport: HttpTransport;
}

/** Attempts in flight at once unless `concurrency` says otherwise. */
export const DEFAULT_CONCURRENCY = 32;
const MAX_LEASE_MARGIN_MS = 15_000;

function positive(value: number | undefined, fallback: number, name: string): number {
  const n = value ?? fallback;
  if (!Number.isSafeInteger(n) || n <= 0) throw new TypeError(`createDispatcher: ${name} must be a positive integer`);
  return n;
}

/**
 * A dispatcher for the run task requests a runplane instance enqueues (`runTasks.startStage`).
 * Each attempt opens the sealed payload, signs it with the task's current HMAC key (D14), POSTs it
 * with a 10 s budget and counts only an exact 200 (D15); anything else is retried with backoff
 * until the deadline, after which the sweep settles the result (D16). `tick()` drives it by hand,
 * `start()`/`stop()` in the background. A stopped dispatcher cannot be started again.
 */
export function createDispatcher(runplane: DispatcherHost, options: DispatcherOptions = {}): Dispatcher {
  const deliveries = runplane.runTasks.deliveries;
  const log = deliveries.logger;
  const leaseMs = positive(options.leaseMs, 30_000, "leaseMs");
  const concurrency = positive(options.concurrency, DEFAULT_CONCURRENCY, "concurrency");
  const batchSize = positive(options.batchSize, Math.max(128, 4 * concurrency), "batchSize");
  const pollIntervalMs = positive(options.pollIntervalMs, 1_000, "pollIntervalMs");
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const failpoint = options.failpoint ?? (() => undefined);
  const ownTransport = options.transport === undefined && options.egress !== undefined;
  const transport =
    options.transport ??
    (options.egress ? createEgress({ ...options.egress, userAgent: runplane.runTasks.settings.userAgent }) : runplane.transport);
  // Issue 26: each attempt also counts in the instance's window that `health()` judges.
  const begin = createAttemptTelemetry(log, (outcomeClass, ok) => deliveries.recent.record(deliveries.now().getTime(), outcomeClass, ok));
  const deps: AttemptDeps = { deliveries, transport, random: options.random ?? Math.random, failpoint, begin };
  const leaseMargin = Math.min(leaseMs / 2, MAX_LEASE_MARGIN_MS);
  const sweeper = createSweeper(deliveries, failpoint);
  // Issue 28: this instance's new request texts are kept for first attempts while a dispatcher exists.
  const releaseTexts = deliveries.holdTexts?.() ?? ((): void => undefined);

  const inflight = new Map<string, Promise<Outcome>>();
  // One signal for every attempt: stop() abandons them all at once, and a controller per attempt
  // was 2 % of a delivery's CPU (issue 28). Replaced when used, so a later tick() starts clean.
  // Each attempt in flight may listen on it: up to `concurrency` listeners are expected, more
  // still warn (a transport that never removes its listener).
  const abandoner = (): AbortController => {
    const controller = new AbortController();
    setMaxListeners(concurrency + 10, controller.signal);
    return controller;
  };
  let abandon = abandoner();
  const claim = (limit: number) => deliveries.claim({ owner, leaseMs, limit });

  /**
   * Starts one attempt, unless its lease is too close to running out to start on (then it goes
   * back). `free` is called once its network part is over; the promise settles once it is recorded.
   */
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
    const done = runAttempt(deps, claimed, abandon.signal, once)
      .catch(async (err: unknown) => {
        // A storage or keyring failure: give the lease back so another pass can try, and say so.
        log.error("run task delivery attempt failed", { deliveryId: row.id, error: err instanceof Error ? err.name : typeof err });
        await deliveries.release(row).catch(() => false);
        return "released" as const;
      })
      .finally(once);
    inflight.set(row.id, done);
    return done.finally(() => inflight.delete(row.id));
  }

  /** Runs `rows` with at most `concurrency` requests on the network at once; resolves their outcomes. */
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

  async function tick(): Promise<TickReport> {
    const report: TickReport = { attempted: 0, delivered: 0, failed: 0, expired: 0 };
    const seen = new Set<string>();
    for (;;) {
      const rows = await claim(batchSize);
      const fresh = rows.filter((r) => !seen.has(r.row.id));
      // A row due again within this tick waits for the next one: one attempt per row per tick.
      await Promise.all(rows.filter((r) => seen.has(r.row.id)).map((r) => deliveries.release(r.row)));
      for (const r of fresh) seen.add(r.row.id);
      for (const outcome of await runAll(fresh)) {
        if (outcome !== "skipped") report.attempted++;
        if (outcome === "delivered") report.delivered++;
        if (outcome === "failed") report.failed++;
      }
      if (rows.length < batchSize || fresh.length < rows.length) break;
    }
    report.expired = await sweeper.sweep();
    return report;
  }

  // The background loop: a local queue of claimed rows feeds the free slots; a claim refills it
  // when it runs low. One claim at a time; a finished attempt starts the next queued row at once.
  const queue: ClaimedDelivery[] = [];
  let head = 0;
  let running = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  let pass: Promise<void> | null = null;
  let again = false;
  let lastSweep = 0;
  let lastUnsettledScan = 0;
  let lastPrune = 0;
  // The last claim found fewer rows than it asked for: until a poll or a started stage says
  // otherwise, a finished attempt does not claim again.
  let drained = false;
  let unsubscribe = (): void => undefined;
  let stopDue = (): void => undefined;
  let unobserve = (): void => undefined;
  let listening: Promise<StopListening | null> = Promise.resolve(null);

  const queued = (): number => queue.length - head;
  // Requests on the network now; an attempt whose answer waits for its batched record is not one.
  let sending = 0;
  const freeSlot = (): void => {
    sending--;
    pump();
  };
  function pump(): void {
    while (running && sending < concurrency && queued() > 0) {
      sending++;
      void launch(queue[head++]!, freeSlot);
    }
    if (head > 1024 && head * 2 > queue.length) queue.splice(0, head), (head = 0);
    if (running && !drained && queued() < concurrency) wake();
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
        if (queued() < concurrency) {
          const want = batchSize - queued();
          const rows = await claim(want);
          drained = rows.length < want;
          queue.push(...rows);
        }
        pump();
        if (Date.now() - lastSweep >= pollIntervalMs) {
          lastSweep = Date.now();
          const unsettled = Date.now() - lastUnsettledScan >= UNSETTLED_SCAN_MS;
          if (unsettled) lastUnsettledScan = Date.now();
          const prune = Date.now() - lastPrune >= ATTEMPT_PRUNE_MS;
          if (prune) lastPrune = Date.now();
          await sweeper.sweep({ unsettled, prune });
        }
      } catch (err) {
        log.error("run task dispatcher pass failed", { error: err instanceof Error ? err.name : typeof err });
      }
    })().finally(() => {
      pass = null;
      schedule(pollIntervalMs);
      if (again) wake();
      again = false;
    });
  }

  return {
    start() {
      if (stopped) throw new Error("createDispatcher: a stopped dispatcher cannot be started again");
      if (running) return;
      running = true;
      // Outbox gauges while this dispatcher runs (issue 17): a host running several reports the
      // same storage's figures from each.
      unobserve = observeOutbox(() => deliveries.outbox());
      const woken = (): void => {
        drained = false;
        wake();
      };
      const started = (e: StageStatusEvent): void => {
        if (e.to === "running") woken();
      };
      const events = runplane.runTasks;
      unsubscribe = (events.onOwn ? events.onOwn("stage-status", started) : events.on?.("stage-status", started)) ?? unsubscribe;
      // decision D27: other processes' stage starts, retries and releases wake this one too.
      listening = subscribeWakeups(deliveries, woken);
      // decision D31: a retry asked for in this process makes its row due now.
      stopDue = deliveries.attempts.onDue(woken);
      schedule(0);
    },
    async stop({ graceMs = 10_000 } = {}) {
      running = false;
      stopped = true;
      unobserve();
      unsubscribe();
      stopDue();
      clearTimeout(timer);
      clearImmediate(immediate);
      const stopListening = await listening;
      await stopListening?.().catch(() => undefined);
      await pass;
      const unsent = queue.splice(head);
      await Promise.all(unsent.map((c) => deliveries.release(c.row).catch(() => false)));
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
      try {
        await deliveries.flush();
      } finally {
        releaseTexts();
      }
      if (ownTransport) await transport.close();
    },
    tick,
    isRunning: () => running,
  };
}
