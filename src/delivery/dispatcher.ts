/**
 * The outbox dispatcher (decisions D15, D16): claims due run task requests in batches with a lease
 * and a fencing token, keeps them in a local queue, sends them through the SSRF-guarded transport
 * at most `concurrency` at a time, records the answers in batched writes, schedules retries with
 * backoff, and sweeps results past their deadline. Any number of dispatchers may run against one
 * storage: a row is held by one of them at a time, and a dispatcher that dies holding rows loses
 * them when its lease runs out.
 */
import type { AttemptDeps } from "./attempt.js";
import { createAgentDispatcher } from "./agent-dispatcher.js";
import { createAttemptTelemetry } from "./attempt-telemetry.js";
import { dispatcherSettings, type Dispatcher, type DispatcherHost, type DispatcherOptions, type TickReport } from "./dispatcher-options.js";
import { createEgress } from "./egress.js";
import { createLauncher } from "./launcher.js";
import { createPassLoop } from "./pass-loop.js";
import { createSweeper } from "./sweeper.js";
import { observeOutbox } from "../telemetry/metrics.js";
import { subscribe, tickOnce } from "./dispatch-parts.js";

export { DISPATCHER_FAILPOINTS, type DispatcherFailpoint } from "./attempt.js";
export { DEFAULT_CONCURRENCY, type Dispatcher, type DispatcherHost, type DispatcherOptions, type TickReport } from "./dispatcher-options.js";

/**
 * A dispatcher for the run task requests a runplane instance enqueues (`runTasks.startStage`).
 * Each attempt opens the sealed payload, signs it with the task's current HMAC key (D14), POSTs it
 * with a 10 s budget and counts only an exact 200 (D15); anything else is retried with backoff
 * until the deadline, after which the sweep settles the result (D16). `tick()` drives it by hand,
 * `start()`/`stop()` in the background. A stopped dispatcher cannot be started again.
 */
export function createDispatcher(runplane: DispatcherHost, options: DispatcherOptions = {}): Dispatcher {
  const deliveries = runplane.runTasks.deliveries;
  const { leaseMs, concurrency, batchSize, pollIntervalMs, owner, leaseMargin, failpoint } = dispatcherSettings(options);
  const ownTransport = options.transport === undefined && options.egress !== undefined;
  const transport =
    options.transport ??
    (options.egress ? createEgress({ ...options.egress, userAgent: runplane.runTasks.settings.userAgent }) : runplane.transport);
  // decision D31: each attempt also counts in the instance's window that `health()` judges.
  const begin = createAttemptTelemetry(deliveries.logger, (outcomeClass, ok) => deliveries.recent.record(deliveries.now().getTime(), outcomeClass, ok), deliveries.telemetry);
  const deps: AttemptDeps = { deliveries, transport, random: options.random ?? Math.random, failpoint, begin };
  const sweeper = createSweeper(deliveries, failpoint);
  // This instance's new request texts are kept for first attempts while a dispatcher exists.
  const releaseTexts = deliveries.holdTexts?.() ?? ((): void => undefined);
  const launcher = createLauncher(deps, { concurrency, leaseMargin });
  const claim = (limit: number) => deliveries.claim({ owner, leaseMs, limit });
  const loop = createPassLoop({ deliveries, launcher, sweeper, claim, concurrency, batchSize, pollIntervalMs });
  let stopped = false;
  let unobserve = (): void => undefined;
  let unsubscribe = async (): Promise<void> => undefined;
  // decision D34: the rows of run tasks bound to an agent pool go through the agents polling here.
  const agents = runplane.agentHub && options.agents !== false ? createAgentDispatcher(runplane, runplane.agentHub, { ...options, agents: options.agents || {} }) : null;

  return {
    start() {
      if (stopped) throw new Error("createDispatcher: a stopped dispatcher cannot be started again");
      if (loop.isRunning()) return;
      agents?.start();
      // Outbox gauges while this dispatcher runs: a host running several reports the same
      // storage's figures from each.
      unobserve = observeOutbox(deliveries.telemetry, () => deliveries.outbox());
      unsubscribe = subscribe(runplane, loop.woken);
      loop.start();
    },
    async stop({ graceMs = 10_000 } = {}) {
      stopped = true;
      const agentsStopped = agents?.stop({ graceMs });
      loop.halt();
      unobserve();
      await unsubscribe();
      const unsent = await loop.unsent();
      await Promise.all(unsent.map((c) => deliveries.release(c.row).catch(() => false)));
      await launcher.finish(graceMs);
      try {
        await agentsStopped;
        await deliveries.flush();
      } finally {
        releaseTexts();
      }
      if (ownTransport) await transport.close();
    },
    async tick() {
      const [direct, viaAgents] = await Promise.all([tickOnce(deliveries, launcher, claim, batchSize, () => sweeper.sweep()), agents?.tick()]);
      if (!viaAgents) return direct;
      return { attempted: direct.attempted + viaAgents.attempted, delivered: direct.delivered + viaAgents.delivered, failed: direct.failed + viaAgents.failed, expired: direct.expired };
    },
    isRunning: () => loop.isRunning(),
  };
}
