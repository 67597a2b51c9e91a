/**
 * The outbox dispatcher (decisions D15, D16): claims due run task requests with a lease and a
 * fencing token, sends them through the SSRF-guarded transport, records the answer, schedules
 * retries with backoff, and sweeps results past their deadline. Any number of dispatchers may run
 * against one storage: a row is held by one of them at a time, and a dispatcher that dies holding
 * rows loses them when its lease runs out.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { StageStatusEvent } from "../services/run-task-events.js";
import type { RunTaskSettings } from "../services/run-task-settings.js";
import type { DeliveryAttempt, TaskDeliveryService } from "../services/task-deliveries.js";
import type { TaskDeliveryRecord } from "../schemas/run-task-records.js";
import { createEgress, type HttpTransport, type Resolver } from "./egress.js";
import { failureReason, statusReason } from "./failure-reason.js";
import { parseRetryAfter, RETRY_AFTER_STATUSES, retryDelayMs } from "./retry-schedule.js";

/**
 * Named points where a test hook may stop the process (crash-safety tests). Production passes no
 * hook. `after-enqueue` sits in the host's code around `runTasks.startStage`, not here.
 */
export const DISPATCHER_FAILPOINTS = ["after-claim", "after-send-before-record", "during-retry-scheduling", "during-sweep"] as const;
export type DispatcherFailpoint = (typeof DISPATCHER_FAILPOINTS)[number];

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
   * within `leaseMs + pollIntervalMs`.
   */
  leaseMs?: number;
  /**
   * Attempts in flight at once. Default 32 ({@link DEFAULT_CONCURRENCY}): attempts wait on the
   * network (up to 10 s each), so a few slow integrations must not hold every slot, and attempts
   * finishing together share their storage commits (the SQLite adapter's group commit), so more of
   * them in flight means fewer commits per request.
   */
  concurrency?: number;
  /**
   * Real-time pause between polls when nothing is due, and between sweeps, in ms. Default 1 s.
   * Stages started through the same runplane instance wake the dispatcher at once; the poll finds
   * what other processes enqueued and retries coming due.
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
  /** Starts polling in the background. Idempotent. */
  start(): void;
  /**
   * Stops polling. Attempts in flight may finish for `graceMs` (default 10 s); then they are
   * abandoned and their rows released, so no lease stays held. Closes a transport it created.
   */
  stop(options?: { graceMs?: number }): Promise<void>;
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
  };
  transport: HttpTransport;
}

/** Attempts in flight at once unless `concurrency` says otherwise. */
export const DEFAULT_CONCURRENCY = 32;

const SWEEP_BATCH = 100;
const MAX_SWEEP_ROUNDS = 50;

type Outcome = "skipped" | "delivered" | "failed" | "released";

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
  const pollIntervalMs = positive(options.pollIntervalMs, 1_000, "pollIntervalMs");
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const random = options.random ?? Math.random;
  const failpoint = options.failpoint ?? (() => undefined);
  const ownTransport = options.transport === undefined && options.egress !== undefined;
  const transport =
    options.transport ??
    (options.egress ? createEgress({ ...options.egress, userAgent: runplane.runTasks.settings.userAgent }) : runplane.transport);

  const inflight = new Map<string, { controller: AbortController; done: Promise<Outcome> }>();

  const fail = (prepared: DeliveryAttempt, error: string, retryAfterMs: number | null) =>
    deliveries.fail(prepared, { error, delayMs: retryDelayMs(prepared.row.attempt + 1, random, retryAfterMs) });

  /** One attempt of one claimed row; every path ends with the row closed, rescheduled or released. */
  async function attempt(row: TaskDeliveryRecord, signal: AbortSignal): Promise<Outcome> {
    await failpoint("after-claim");
    const prepared = await deliveries.prepare(row);
    if (!prepared) return "skipped";
    if (!prepared.ready) {
      await fail(prepared, prepared.error, null);
      return "failed";
    }
    let failure: { error: string; retryAfterMs: number | null } | null = null;
    try {
      // Exactly 200 is success, whatever the body (the egress keeps at most 64 KiB of it); a body
      // still arriving when the 10 s budget ends is a timeout like any other.
      const res = await transport.send({ ...prepared.request, signal });
      if (res.status !== 200) {
        const retryAfter = RETRY_AFTER_STATUSES.has(res.status) ? parseRetryAfter(res.headers["retry-after"], deliveries.now()) : null;
        failure = { error: statusReason(res.status), retryAfterMs: retryAfter };
      }
    } catch (err) {
      // Abandoned by stop(): the row goes back as it was; the next owner sends it again.
      if (signal.aborted) return (await deliveries.release(row), "released");
      failure = { error: failureReason(err), retryAfterMs: null };
    }
    await failpoint("after-send-before-record");
    if (failure === null) return (await deliveries.succeed(prepared), "delivered");
    await failpoint("during-retry-scheduling");
    await fail(prepared, failure.error, failure.retryAfterMs);
    return "failed";
  }

  function launch(row: TaskDeliveryRecord): Promise<Outcome> {
    const controller = new AbortController();
    const done = attempt(row, controller.signal).catch(async (err: unknown) => {
      // A storage or keyring failure: give the lease back so another pass can try, and say so.
      log.error("run task delivery attempt failed", { deliveryId: row.id, error: err instanceof Error ? err.name : typeof err });
      await deliveries.release(row).catch(() => false);
      return "released" as const;
    });
    inflight.set(row.id, { controller, done });
    return done.finally(() => inflight.delete(row.id));
  }

  async function sweep(): Promise<number> {
    let expired = 0;
    try {
      for (let round = 0; round < MAX_SWEEP_ROUNDS; round++) {
        const due = await deliveries.listExpired(SWEEP_BATCH);
        for (const result of due) {
          const stored = await deliveries.expire(result);
          if (!stored) continue;
          expired++;
          await failpoint("during-sweep");
          await deliveries.settle(stored.stageId);
        }
        if (due.length < SWEEP_BATCH) break;
      }
      for (const stage of await deliveries.listUnsettledStages(SWEEP_BATCH)) await deliveries.settle(stage.id);
    } catch (err) {
      log.error("run task deadline sweep failed", { error: err instanceof Error ? err.name : typeof err });
    }
    return expired;
  }

  async function tick(): Promise<TickReport> {
    const report: TickReport = { attempted: 0, delivered: 0, failed: 0, expired: 0 };
    const seen = new Set<string>();
    for (;;) {
      const rows = await deliveries.claim({ owner, leaseMs, limit: concurrency });
      const fresh = rows.filter((r) => !seen.has(r.id));
      // A row due again within this tick waits for the next one: one attempt per row per tick.
      await Promise.all(rows.filter((r) => seen.has(r.id)).map((r) => deliveries.release(r)));
      const outcomes = await Promise.all(fresh.map((r) => (seen.add(r.id), launch(r))));
      for (const outcome of outcomes) {
        if (outcome !== "skipped") report.attempted++;
        if (outcome === "delivered") report.delivered++;
        if (outcome === "failed") report.failed++;
      }
      if (rows.length < concurrency || fresh.length < rows.length) break;
    }
    report.expired = await sweep();
    return report;
  }

  // The background loop: one pass at a time; a finished attempt asks for another pass at once.
  let running = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  let pass: Promise<void> | null = null;
  let again = false;
  let lastSweep = 0;
  let unsubscribe = (): void => undefined;

  const schedule = (ms: number): void => {
    clearTimeout(timer);
    if (running) timer = setTimeout(runPass, ms);
  };
  // Not a zero timeout: timers are clamped to 1 ms and re-arming one per finished attempt kept
  // postponing the refill while answers streamed in. Attempts finishing in one turn of the event
  // loop share the pass (and its claim).
  const wake = (): void => {
    if (running && immediate === undefined) immediate = setImmediate(() => ((immediate = undefined), runPass()));
  };
  function runPass(): void {
    if (pass) {
      again = true;
      return;
    }
    pass = (async () => {
      try {
        const free = concurrency - inflight.size;
        if (free > 0) {
          for (const row of await deliveries.claim({ owner, leaseMs, limit: free })) {
            void launch(row).then(wake);
          }
        }
        if (Date.now() - lastSweep >= pollIntervalMs) {
          lastSweep = Date.now();
          await sweep();
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
      unsubscribe = runplane.runTasks.on?.("stage-status", (e) => e.to === "running" && wake()) ?? unsubscribe;
      schedule(0);
    },
    async stop({ graceMs = 10_000 } = {}) {
      running = false;
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      clearImmediate(immediate);
      await pass;
      let grace: NodeJS.Timeout | undefined;
      const settled = Promise.allSettled([...inflight.values()].map((f) => f.done));
      const finished = await Promise.race([
        settled.then(() => true),
        new Promise<false>((resolve) => (grace = setTimeout(() => resolve(false), graceMs))),
      ]);
      clearTimeout(grace);
      if (!finished) {
        for (const f of inflight.values()) f.controller.abort();
        await Promise.allSettled([...inflight.values()].map((f) => f.done));
      }
      if (ownTransport) await transport.close();
    },
    tick,
  };
}
