import { cpuOfPids, cpuSpent } from "../lib/cpu-snap.js";
import { startDeliveryRig, type DeliveryRig } from "../lib/receiver.js";
import { alternate, series } from "../lib/stats.js";
import type { Scenario, ScenarioResult } from "./types.js";

/**
 * CPU per delivery: what each delivered request costs the host's process against what
 * a raw undici POST of the same bytes costs the same process, measured alternately in one run. CPU
 * is a gauge a busy machine moves much less than a rate: time spent waiting for a core is not in it.
 */
const RUNS = Number(process.env.BENCH_FANOUT_RUNS ?? 1000);
const TASKS_PER_RUN = 10;

interface Measured {
  requests: number;
  perSecond: number;
  cpuUs: number;
}

/** One workload on the rig: the host's CPU per request (µs); the receiver's and the rate go to `aside`. */
function perRequest(rig: DeliveryRig, workload: string, sizes: Record<string, number>, aside: { receiverUs: number[]; rates: number[] }) {
  return async (): Promise<number> => {
    const pid = [rig.receiver.child.pid!];
    const before = cpuOfPids(pid);
    const m = await rig.measure<Measured>(workload, sizes);
    aside.receiverUs.push((cpuSpent(before, cpuOfPids(pid)) * 1e6) / m.requests);
    aside.rates.push(m.perSecond);
    return m.cpuUs / m.requests;
  };
}

const med = (values: number[]): string => Math.round(series(values).median).toLocaleString("en-US");

function cpuPerDelivery(name: string, storage: "memory" | "sqlite", target: number): Scenario {
  return {
    name,
    async run(samples): Promise<ScenarioResult> {
      // --expose-gc: every measured window starts after a full GC (see cpuWindow).
      const rig = await startDeliveryRig({ BENCH_STORAGE: storage, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --expose-gc`.trim() });
      try {
        const requests = RUNS * TASKS_PER_RUN;
        const runplane = { receiverUs: [] as number[], rates: [] as number[] };
        const raw = { receiverUs: [] as number[], rates: [] as number[] };
        // Apart, per sample: the same fan-out answered 200 in process (runplane's own work, no HTTP)
        // and the raw requests sent through runplane's guarded egress (its HTTP alone).
        const parts = { local: [] as number[], egress: [] as number[] };
        const ignored = { receiverUs: [] as number[], rates: [] as number[] };
        const subject = perRequest(rig, "fanout", { runs: RUNS }, runplane);
        const withParts = async (): Promise<number> => {
          parts.local.push(await perRequest(rig, "fanout-local", { runs: RUNS }, ignored)());
          parts.egress.push(await perRequest(rig, "egress-posts", { requests }, ignored)());
          return subject();
        };
        const r = await alternate(samples, withParts, perRequest(rig, "raw-posts", { requests }, raw));
        const ratio = r.subject.median / r.baseline.median;
        const { concurrency, bodyBytes } = rig.server.info;
        const store = storage === "sqlite" ? "SQLite file (synchronous FULL)" : "memory adapter";
        return {
          name,
          unit: "µs CPU/delivery",
          ...r,
          ratio,
          target: `<= ${target.toFixed(2)}`,
          met: ratio <= target,
          notes:
            `host process CPU (user + system, all threads, process.cpuUsage) per delivered request: ${requests} results ` +
            `(${RUNS} runs x ${TASKS_PER_RUN} mandatory post_plan tasks, every stage started at once) from the first startStage until ` +
            `every delivery is recorded, ${store}, dispatcher concurrency ${concurrency}; baseline: the same process POSTing the same ` +
            `${bodyBytes}-byte signed requests with raw undici, ${concurrency} at a time, per POST; each window opens after a full GC ` +
            `(uncounted; collections within it count); apart, in each sample: the same fan-out answered 200 in process ` +
            `(runplane's own work, no HTTP) ${med(parts.local)} µs per delivery, and the raw requests through runplane's guarded egress ` +
            `${med(parts.egress)} µs per POST; receiver (node:http, own process, /proc): ${med(runplane.receiverUs)} µs per delivery, ` +
            `${med(raw.receiverUs)} µs per raw POST; rates ${med(runplane.rates)} and ${med(raw.rates)} req/s`,
        };
      } finally {
        await rig.stop();
      }
    },
  };
}

export const scenarios: Scenario[] = [
  cpuPerDelivery("CPU per delivery, memory adapter", "memory", 1.6),
  cpuPerDelivery("CPU per delivery, SQLite file", "sqlite", 2.5),
];
