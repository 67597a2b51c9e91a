import { HOSTS, RUNS, startPostgresRig, TASKS_PER_RUN, type Gauge, type PostgresRig } from "../lib/postgres-rig.js";
import { whyNoDatabase } from "../lib/postgres.js";
import { alternate } from "../lib/stats.js";
import { readScenario, writeScenario } from "./http.js";
import type { Scenario, ScenarioResult } from "./types.js";
import { WITHDRAWN } from "./delivery.js";

/**
 * The PostgreSQL rows: delivery fan-out from two host processes sharing one database, against raw
 * undici POSTs and against graphile-worker executing the same POSTs from the same database, and
 * the HTTP read and write rows on PostgreSQL. Without a reachable DATABASE_URL there are none.
 * (The CPU per delivery and peer rows on the same rig are in bench/scenarios/peer.ts.)
 */

const setup = (info: Record<string, string>): string =>
  `${RUNS * TASKS_PER_RUN} results: ${RUNS} runs x ${TASKS_PER_RUN} mandatory post_plan tasks, ${HOSTS} host processes on one PostgreSQL ` +
  `database (local, pool of 10 each), each starting half of the stages at once and running a dispatcher at concurrency ${info.concurrency}; ` +
  `from the first start on any host to the last 200 on any host; receiver: node:http in its own process`;

/** CPU seconds per 10,000 deliveries, e.g. `hosts 3.10 s, postgres 2.20 s, receiver 0.90 s` (postgres: every process of the cluster). */
const per10k = (g: Gauge): string => {
  const s = (us: number): string => `${((us * 10_000) / 1e6).toFixed(2)} s`;
  return `hosts ${s(g.hostsUs)}, postgres ${s(g.clusterUs)}, receiver ${s(g.receiverUs)}`;
};

/**
 * A fan-out row: runplane's rate over `baseline`'s, alternating samples on one rig; the notes give
 * runplane's CPU by sample, and the baseline's when it is `cpuLabel`ed.
 */
function fanOutScenario(
  name: string,
  baseline: (rig: PostgresRig) => () => Promise<Gauge>,
  cpuLabel: string | null,
  describe: (info: Record<string, string>) => string,
): Scenario {
  return {
    name,
    async run(samples): Promise<ScenarioResult> {
      const rig = await startPostgresRig();
      try {
        const cpu: string[] = [];
        const rate = (label: string | null, measure: () => Promise<Gauge>) => async (): Promise<number> => {
          const g = await measure();
          if (label) cpu.push(`${label}: ${per10k(g)}`);
          return g.rate;
        };
        const r = await alternate(samples, rate("runplane", rig.fanOut), rate(cpuLabel, baseline(rig)));
        const ratio = r.subject.median / r.baseline.median;
        return { name, unit: "req/s", ...r, ratio, target: WITHDRAWN, notes: `${setup(rig.info)}; baseline: ${describe(rig.info)}; CPU per 10,000 deliveries, by sample: ${cpu.join("; ")}` };
      } finally {
        await rig.stop();
      }
    },
  };
}

const againstRaw = fanOutScenario(
  "Fan-out, 2 hosts on PostgreSQL",
  (rig) => rig.raw,
  null,
  (info) => `the same ${info.bodyBytes}-byte signed requests by raw undici from both processes, ${info.concurrency} at a time each`,
);

const againstGraphile = fanOutScenario(
  "Fan-out vs graphile-worker, 2 hosts on PostgreSQL",
  (rig) => rig.graphile,
  "graphile-worker",
  (info) =>
    `graphile-worker 0.17.3 in the same processes on the same database, concurrency ${info.concurrency} each, local queue of 128, ` +
    `completion and failure batched over 250 ms, one addJobs of ${TASKS_PER_RUN} jobs per run, each job POSTing the same signed bytes with undici`,
);

const unreachable = await whyNoDatabase();
if (unreachable) process.stderr.write(`bench: PostgreSQL scenarios left out: ${unreachable} (set DATABASE_URL)\n`);

export const scenarios: Scenario[] = unreachable
  ? []
  : [readScenario("HTTP read, PostgreSQL", "hono", "postgres"), writeScenario("HTTP write, PostgreSQL", "postgres"), againstRaw, againstGraphile];
