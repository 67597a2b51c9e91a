import { HOSTS, RUNS, startPostgresRig, TASKS_PER_RUN, type Gauge } from "../lib/postgres-rig.js";
import { whyNoDatabase } from "../lib/postgres.js";
import { series } from "../lib/stats.js";
import type { Scenario, ScenarioResult } from "./types.js";

/**
 * On the 2-host PostgreSQL rig: runplane's CPU per delivery against raw undici POSTs,
 * and runplane against the peer doing the same work (bench/lib/peer-task.ts), rate and CPU. One
 * sample measures raw, peer and runplane in turn, so the three rows share their runplane samples.
 */
const NAME = "CPU per delivery, 2 hosts on PostgreSQL";
const PEER = "Peer doing the same work, 2 hosts on PostgreSQL";

/** Host processes plus the product's database backends, µs per delivery. */
const total = (g: Gauge): number => g.hostsUs + g.databaseUs;
const med = (gauges: Gauge[], pick: (g: Gauge) => number): string => Math.round(series(gauges.map(pick)).median).toLocaleString("en-US");
const split = (gauges: Gauge[]): string =>
  `hosts ${med(gauges, (g) => g.hostsUs)} + database ${med(gauges, (g) => g.databaseUs)} µs ` +
  `(every postgres process of the machine: ${med(gauges, (g) => g.clusterUs)}; receiver apart: ${med(gauges, (g) => g.receiverUs)})`;

function rows(raw: Gauge[], runplane: Gauge[], peer: Gauge[], info: Record<string, string>): ScenarioResult[] {
  const setup =
    `${RUNS * TASKS_PER_RUN} results (${RUNS} runs x ${TASKS_PER_RUN} mandatory post_plan tasks) per sample, ${HOSTS} host processes ` +
    `on one local PostgreSQL database, each starting half at once; CPU is user + system from /proc: the host processes (all threads) ` +
    `plus the PostgreSQL backends of the product's own connections (found in pg_stat_activity by application_name), from the first ` +
    `start until every delivery is recorded, each window opening after a full GC in the hosts; medians, µs per delivery`;
  const cpuRow = (name: string, subject: Gauge[], baseline: Gauge[], target: number, notes: string): ScenarioResult => {
    const s = series(subject.map(total));
    const b = series(baseline.map(total));
    const ratio = s.median / b.median;
    return { name, unit: "µs CPU/delivery", subject: s, baseline: b, ratio, target: `<= ${target.toFixed(2)}`, met: ratio <= target, notes: `${notes}; ${setup}` };
  };
  const rate = { subject: series(runplane.map((g) => g.rate)), baseline: series(peer.map((g) => g.rate)) };
  const peerWork =
    `the peer: a graphile-worker 0.17.3 runner in each host process (concurrency ${info.concurrency}, local queue of 128, completion ` +
    `batched over 250 ms, pool of 10) whose task, per result, builds the same payload with runplane's buildRunTaskRequest and ` +
    `serializeRunTaskRequest, makes a 32-byte access token and UPDATEs its SHA-256 digest into its results table, signs with ` +
    `runTaskRequestHeaders (HMAC-SHA512), POSTs with undici and UPDATEs the result's status; results stored untimed, then one ` +
    `addJobs of ${TASKS_PER_RUN} per run, all at once; each product idles in the same processes while the other is measured ` +
    `(the bare graphile-worker row POSTs precomputed bytes)`;
  return [
    cpuRow(NAME, runplane, raw, 3.5, `runplane ${split(runplane)}; baseline: the same hosts POSTing the same ${info.bodyBytes}-byte signed requests with raw undici, ${info.concurrency} at a time each, per POST: ${split(raw)}`),
    {
      name: `${PEER}: rate`,
      unit: "req/s",
      ...rate,
      ratio: rate.subject.median / rate.baseline.median,
      target: ">= 1.00",
      met: rate.subject.median >= rate.baseline.median,
      notes: `runplane against ${peerWork}; from the first start on any host to the last 200 on any host, every delivery recorded`,
    },
    cpuRow(`${PEER}: CPU per delivery`, runplane, peer, 1, `runplane ${split(runplane)}; ${peerWork}: ${split(peer)}`),
  ];
}

const gauges: Scenario = {
  name: `${NAME}, and the peer doing the same work`,
  async run(samples): Promise<ScenarioResult[]> {
    const rig = await startPostgresRig();
    try {
      const raw: Gauge[] = [];
      const runplane: Gauge[] = [];
      const peer: Gauge[] = [];
      for (let i = 0; i < samples; i++) {
        raw.push(await rig.raw());
        peer.push(await rig.peer());
        runplane.push(await rig.fanOut());
      }
      return rows(raw, runplane, peer, rig.info);
    } finally {
      await rig.stop();
    }
  },
};

const unreachable = await whyNoDatabase();

export const scenarios: Scenario[] = unreachable ? [] : [gauges];
