/**
 * decision D34: the agent dispatcher. Built from the direct dispatcher's parts (pass loop, launcher,
 * attempt), it claims only rows of the pools that have an agent waiting on this host, at most as
 * many per pool as agents wait, and sends each through the agent transport: the built, signed
 * request goes to one waiting agent, whose report is recorded exactly as a direct answer is. So
 * attempts, retries, the deadline (D16), "retry now" (D31), metrics and health are the same; a
 * job no agent took gives its row back (a release, not an attempt); one an agent held and never
 * reported is an attempt closed as "no report from agent NAME" (decision D45).
 */
import type { AgentHub } from "../services/agent-hub.js";
import type { ClaimedDelivery } from "../storage/types.js";
import { createAgentTransport, type AgentTransportOptions } from "./agent-transport.js";
import type { AttemptDeps } from "./attempt.js";
import { createAttemptTelemetry } from "./attempt-telemetry.js";
import { dispatcherSettings, type Dispatcher, type DispatcherHost, type DispatcherOptions } from "./dispatcher-options.js";
import { subscribe, tickOnce } from "./dispatch-parts.js";
import { createLauncher, type Launcher } from "./launcher.js";
import { createPassLoop } from "./pass-loop.js";
import type { createSweeper } from "./sweeper.js";

/** The direct dispatcher sweeps deadlines for every result; this one has nothing of its own to sweep. */
const NO_SWEEP = { sweep: async () => 0 } as unknown as ReturnType<typeof createSweeper>;
/** Attempts in flight are bounded by the agents waiting, not by a slot count. */
const AGENT_SLOTS = 4096;

/** Counts claimed rows of each pool until their attempt's network part is over. */
function createReservations() {
  const reserved = new Map<string, number>();
  return {
    count: (pool: string): number => reserved.get(pool) ?? 0,
    add(pool: string, n: number): void {
      reserved.set(pool, (reserved.get(pool) ?? 0) + n);
    },
    done(pool: string): void {
      const n = (reserved.get(pool) ?? 1) - 1;
      if (n > 0) reserved.set(pool, n);
      else reserved.delete(pool);
    },
  };
}

/** A launcher whose rows stay reserved until their attempt's network part is over. */
function reservingLauncher(launcher: Launcher, reservations: ReturnType<typeof createReservations>): Launcher {
  const launch: Launcher["launch"] = (claimed, free) => {
    const pool = claimed.row.agentPoolId ?? "";
    let freed = false;
    return launcher.launch(claimed, () => {
      if (!freed) (freed = true), reservations.done(pool);
      free();
    });
  };
  // Every claimed row has its agent waiting: all start at once.
  return { launch, runAll: (rows) => Promise.all(rows.map((r) => launch(r, () => undefined))), finish: launcher.finish };
}

/**
 * A job's time (the attempt's budget plus the wait for its report) kept within the lease an attempt
 * is sure to have left when it starts, so a row's lease always outlives its job: with the defaults
 * (10 s + 3 s within 15 s) nothing changes; a shorter `leaseMs` shortens the job.
 */
function withinLease(agents: AgentTransportOptions, leaseMargin: number): AgentTransportOptions {
  const marginMs = Math.min(agents.marginMs ?? 3_000, Math.floor(leaseMargin / 4));
  return { marginMs, timeoutMs: Math.min(agents.timeoutMs ?? 10_000, leaseMargin - marginMs) };
}

export type AgentDispatcherOptions = Omit<DispatcherOptions, "transport" | "egress" | "concurrency"> & { agents?: AgentTransportOptions };

export function createAgentDispatcher(runplane: DispatcherHost, hub: AgentHub, options: AgentDispatcherOptions = {}): Dispatcher {
  const deliveries = runplane.runTasks.deliveries;
  const settings = dispatcherSettings({ ...options, concurrency: AGENT_SLOTS, batchSize: AGENT_SLOTS });
  const { leaseMs, owner, leaseMargin, failpoint, pollIntervalMs } = settings;
  const transport = createAgentTransport(hub, withinLease(options.agents ?? {}, leaseMargin));
  const begin = createAttemptTelemetry(deliveries.logger, (outcomeClass, ok) => deliveries.recent.record(deliveries.now().getTime(), outcomeClass, ok), deliveries.telemetry);
  const deps: AttemptDeps = { deliveries, transport, random: options.random ?? Math.random, failpoint, begin };
  const reservations = createReservations();
  const launcher = reservingLauncher(createLauncher(deps, { concurrency: AGENT_SLOTS, leaseMargin }), reservations);

  /** Per pool with agents waiting here, as many rows as agents wait (less those already claimed for them). */
  async function claim(limit: number): Promise<ClaimedDelivery[]> {
    const claimed: ClaimedDelivery[] = [];
    for (const [pool, idle] of hub.idle()) {
      const want = Math.min(idle - reservations.count(pool), limit - claimed.length);
      if (want <= 0) continue;
      const rows = await deliveries.claim({ owner, leaseMs, limit: want, pools: [pool] });
      reservations.add(pool, rows.length);
      claimed.push(...rows);
    }
    return claimed;
  }
  const loop = createPassLoop({ deliveries, launcher, sweeper: NO_SWEEP, claim, concurrency: AGENT_SLOTS, batchSize: AGENT_SLOTS, pollIntervalMs });
  let stopped = false;
  let unsubscribe = async (): Promise<void> => undefined;
  let stopIdle = (): void => undefined;

  return {
    start() {
      if (stopped) throw new Error("createAgentDispatcher: a stopped dispatcher cannot be started again");
      if (loop.isRunning()) return;
      unsubscribe = subscribe(runplane, loop.woken);
      // An agent starting to wait may be the one a due row needs.
      stopIdle = hub.onIdle(loop.woken);
      loop.start();
    },
    async stop({ graceMs = 10_000 } = {}) {
      stopped = true;
      loop.halt();
      stopIdle();
      await unsubscribe();
      const unsent = await loop.unsent();
      await Promise.all(unsent.map((c) => deliveries.release(c.row).catch(() => false)));
      await launcher.finish(graceMs);
      await deliveries.flush();
    },
    tick: () => tickOnce(deliveries, launcher, claim, AGENT_SLOTS, async () => 0),
    isRunning: () => loop.isRunning(),
  };
}
