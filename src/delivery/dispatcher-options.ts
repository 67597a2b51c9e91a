import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { StageStatusEvent } from "../services/run-task-events.js";
import type { RunTaskSettings } from "../services/run-task-settings.js";
import type { TaskDeliveryService } from "../services/task-deliveries.js";
import type { DispatcherFailpoint } from "./attempt.js";
import type { AgentHub } from "../services/agent-hub.js";
import type { AgentTransportOptions } from "./agent-transport.js";
import type { HttpTransport, Resolver } from "./egress.js";

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
  /**
   * decision D34: the agent dispatcher that runs next to this one and sends the rows of run tasks
   * bound to an agent pool through the pool's agents polling this host: the attempt's budget
   * (`timeoutMs`, default 10 s) and how much longer the host waits for the agent's report before
   * it gives the row back (`marginMs`, default 3 s). `false`: none (pool rows wait for a host that runs one).
   */
  agents?: AgentTransportOptions | false;
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
  /** decision D34: the agent sessions of this host; with them the dispatcher also serves agent pools. */
  agentHub?: AgentHub;
}

/** Attempts in flight at once unless `concurrency` says otherwise. */
export const DEFAULT_CONCURRENCY = 32;
const MAX_LEASE_MARGIN_MS = 15_000;

function positive(value: number | undefined, fallback: number, name: string): number {
  const n = value ?? fallback;
  if (!Number.isSafeInteger(n) || n <= 0) throw new TypeError(`createDispatcher: ${name} must be a positive integer`);
  return n;
}

/** The numbers a dispatcher runs by, from its options: each checked, each defaulted. */
export interface DispatcherSettings {
  leaseMs: number;
  concurrency: number;
  batchSize: number;
  pollIntervalMs: number;
  owner: string;
  /** How much lease a claimed row must have left for an attempt to start on it. */
  leaseMargin: number;
  failpoint: (name: DispatcherFailpoint) => void | Promise<void>;
}

export function dispatcherSettings(options: DispatcherOptions): DispatcherSettings {
  const leaseMs = positive(options.leaseMs, 30_000, "leaseMs");
  const concurrency = positive(options.concurrency, DEFAULT_CONCURRENCY, "concurrency");
  return {
    leaseMs,
    concurrency,
    batchSize: positive(options.batchSize, Math.max(128, 4 * concurrency), "batchSize"),
    pollIntervalMs: positive(options.pollIntervalMs, 1_000, "pollIntervalMs"),
    owner: options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    leaseMargin: Math.min(leaseMs / 2, MAX_LEASE_MARGIN_MS),
    failpoint: options.failpoint ?? (() => undefined),
  };
}
