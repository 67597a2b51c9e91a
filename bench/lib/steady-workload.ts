import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Runplane } from "../../src/index.js";
import { createRuns, STAGE, within } from "./delivery-workloads.js";
import { openLoop, wallNow } from "./open-loop.js";
import { profileWindow } from "./profile-window.js";
import { percentile } from "./stats.js";

/**
 * Steady state, the runplane side, run inside bench/servers/delivery-server.ts: stages
 * started at a fixed rate on a workspace whose tasks point at the receiver's `/timed/` path (it
 * notes each request's arrival and calls back `passed` at once). Latency runs from each stage's
 * scheduled start (see {@link openLoop}) to its requests' arrival at the receiver and to the stage's
 * `passed` event; stages scheduled within the warm-up are started but not counted.
 */
export interface SteadySizes {
  rate: number;
  seconds: number;
  warmupSeconds: number;
}

interface Percentiles {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

const summary = (values: number[]): Percentiles => {
  const sorted = values.sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? 0 };
};

export function steadyWorkload(runplane: Runplane, options: { workspaceId: string; receiverUrl: string }) {
  const { runTasks } = runplane;
  let prepared: string[] = [];

  return {
    /** Creates the runs of one sample (untimed, 16 at a time); answers one of their stages to read. */
    async prepare(sizes: SteadySizes): Promise<{ runs: number; stageId: string }> {
      const total = Math.ceil(sizes.rate * (sizes.warmupSeconds + sizes.seconds));
      const lanes = Array.from({ length: 16 }, (_, i) => Math.floor(total / 16) + (i < total % 16 ? 1 : 0));
      prepared = (await Promise.all(lanes.map((n) => createRuns(runplane, options.workspaceId, n)))).flat();
      const { items } = await runTasks.listStages(prepared[0]!);
      return { runs: prepared.length, stageId: items.find((s) => s.stage === STAGE)!.id };
    },

    /** Starts the prepared runs' stages at `rate` per second; resolves once every stage is final. */
    async run(sizes: SteadySizes) {
      const ids = prepared;
      prepared = [];
      const start = wallNow() + 50;
      const countedFrom = start + sizes.warmupSeconds * 1000;
      const dueOf = new Map<string, number>();
      const passed: number[] = [];
      const other: string[] = [];
      let final = 0;
      let off = (): void => undefined;
      const allFinal = new Promise<void>((resolve) => {
        off = runTasks.on("stage-status", (e) => {
          const due = dueOf.get(e.runId);
          if (due === undefined || e.to === "running") return;
          if (e.to !== "passed") other.push(e.to);
          else if (due >= countedFrom) passed.push(wallNow() - due);
          if (++final === ids.length) resolve();
        });
      });
      // The host's own event-loop stalls over the sample (a blocking commit or checkpoint shows here).
      const stalls = monitorEventLoopDelay({ resolution: 5 });
      stalls.enable();
      // BENCH_PROFILE_DIR: the main thread's profile of the sample (steady-<n>.cpuprofile), where a
      // commit's fsync shows as time inside the statement that ran COMMIT.
      const profiled = await profileWindow("steady");
      try {
        const loop = await openLoop({ rate: sizes.rate, count: ids.length, start }, (i, due) => {
          dueOf.set(ids[i]!, due);
          return runTasks.startStage(ids[i]!, STAGE);
        });
        if (loop.failures > 0) throw new Error(`${loop.failures} stage starts failed: ${loop.firstFailure}`);
        await within(allFinal, () => `${final} of ${ids.length} stages final`);
        if (other.length > 0) throw new Error(`${other.length} stages did not pass (${[...new Set(other)].join(", ")})`);
        const notes = (await (await fetch(`${options.receiverUrl}/received`)).json()) as Record<string, [string, number]>;
        const received = Object.values(notes)
          .filter(([runId]) => (dueOf.get(runId) ?? 0) >= countedFrom)
          .map(([runId, at]) => at - dueOf.get(runId)!);
        const hostLoop = { p99: stalls.percentile(99) / 1e6, max: stalls.max / 1e6 };
        return { received: summary(received), passed: summary(passed), maxLagMs: loop.maxLagMs, started: ids.length, hostLoop };
      } finally {
        await profiled();
        stalls.disable();
        off();
      }
    },
  };
}
