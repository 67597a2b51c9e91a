import { startDeliveryRig } from "../lib/receiver.js";
import { alternate, series } from "../lib/stats.js";
import type { Scenario, ScenarioResult } from "./types.js";

// Smaller sizes for iterating on one machine; the sizes are the defaults.
const FANOUT_RUNS = Number(process.env.BENCH_FANOUT_RUNS ?? 1000);
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 1000);
const TASKS_PER_RUN = 10;

interface Rate {
  perSecond: number;
  requests: number;
}

/**
 * 1,000 runs x 10 mandatory post_plan tasks, every stage started at once, against the same bytes
 * POSTed by raw undici at the dispatcher's concurrency. Both hit one receiver process answering 200.
 */
const fanOut: Scenario = {
  name: "Fan-out",
  async run(samples): Promise<ScenarioResult> {
    const rig = await startDeliveryRig();
    try {
      const requests = FANOUT_RUNS * TASKS_PER_RUN;
      const rate = (workload: string, sizes: Record<string, number>) => async () => (await rig.measure<Rate>(workload, sizes)).perSecond;
      const r = await alternate(samples, rate("fanout", { runs: FANOUT_RUNS }), rate("raw-posts", { requests }));
      const ratio = r.subject.median / r.baseline.median;
      const { concurrency, bodyBytes } = rig.server.info;
      return {
        name: "Fan-out",
        unit: "req/s",
        ...r,
        ratio,
        target: ">= 0.50",
        met: ratio >= 0.5,
        notes:
          `${requests} results: ${FANOUT_RUNS} runs x ${TASKS_PER_RUN} mandatory post_plan tasks on one workspace, every stage started at once; ` +
          `from the first startStage to the last 200; dispatcher concurrency ${concurrency}, SQLite file (synchronous FULL), egress allowing 127.0.0.1/32 only; ` +
          `baseline: the same ${bodyBytes}-byte signed requests by raw undici, ${concurrency} at a time; receiver: node:http in its own process`,
      };
    } finally {
      await rig.stop();
    }
  },
};

interface Latency {
  p50: number;
  p99: number;
  max: number;
  ms: number;
}

/** 1,000 runs x 2 tasks whose receiver calls back `passed` over HTTP right after its 200. */
const stageLatency: Scenario = {
  name: "Stage latency",
  async run(samples): Promise<ScenarioResult> {
    const rig = await startDeliveryRig();
    try {
      const measured: Latency[] = [];
      for (let i = 0; i < samples; i++) measured.push(await rig.measure<Latency>("latency", { runs: LATENCY_RUNS }));
      const p99 = series(measured.map((m) => m.p99));
      const p50 = series(measured.map((m) => m.p50));
      return {
        name: "Stage latency",
        unit: "ms p99",
        subject: p99,
        target: "p99 < 2 s",
        met: p99.median < 2000,
        notes:
          `p50 median ${Math.round(p50.median)} ms (${Math.round(p50.min)}-${Math.round(p50.max)}); ${LATENCY_RUNS} runs x 2 mandatory post_plan tasks, ` +
          `every stage started at once; per run from its startStage call to its stage-status "passed"; the receiver PATCHes the callback ` +
          `(HCP format, status passed) over HTTP right after its 200; dispatcher concurrency ${rig.server.info.concurrency}, SQLite file (synchronous FULL)`,
      };
    } finally {
      await rig.stop();
    }
  },
};

export const scenarios: Scenario[] = [fanOut, stageLatency];
