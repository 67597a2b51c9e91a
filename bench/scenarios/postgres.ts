import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { generateKey } from "../../src/index.js";
import { startServer, type ChildServer } from "../lib/child-server.js";
import { benchSchema, DATABASE_URL, dropSchemas, whyNoDatabase } from "../lib/postgres.js";
import { alternate } from "../lib/stats.js";
import { readScenario, writeScenario } from "./http.js";
import type { Scenario, ScenarioResult } from "./types.js";
import { cpuPer10k, cpuSnapshot } from "../lib/cpu-snap.js";

/**
 * The PostgreSQL rows: delivery fan-out from two host processes sharing one database, against raw
 * undici POSTs and against graphile-worker executing the same POSTs from the same database, and
 * the HTTP read and write rows on PostgreSQL. Without a reachable DATABASE_URL there are none.
 */
const RUNS = Number(process.env.BENCH_PG_FANOUT_RUNS ?? 1000);
const HOSTS = 2;
const TASKS_PER_RUN = 10;
const TIMEOUT_MS = 180_000;

const HOST = fileURLToPath(new URL("../servers/postgres-host.ts", import.meta.url));
const RECEIVER = fileURLToPath(new URL("../servers/receiver.ts", import.meta.url));

interface Started {
  t0: number;
  deliveries: number;
}
interface Counters {
  runplane: { oks: number; lastOk: number };
  graphile: { oks: number; lastOk: number };
}

/**
 * A receiver answering 200, and two postgres-host processes on one fresh schema (and one fresh
 * graphile-worker schema) with one keyring: each runs runplane's dispatcher and a graphile-worker
 * runner, and each starts half of every workload, so both share the work as replicas would.
 */
async function startRig() {
  const schema = benchSchema("fanout");
  const graphileSchema = `${schema}_gw`;
  const dir = mkdtempSync(join(tmpdir(), "rp-bench-pg-"));
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  admin.on("error", () => undefined);
  const started: ChildServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(started.map((s) => s.stop()));
    await admin.end();
    await dropSchemas(schema, graphileSchema);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const receiver = await startServer("receiver", {}, RECEIVER);
    started.push(receiver);
    const env = {
      DATABASE_URL,
      BENCH_PG_SCHEMA: schema,
      GRAPHILE_SCHEMA: graphileSchema,
      RECEIVER_URL: receiver.url,
      RUNPLANE_KEYRING: JSON.stringify({ keys: [{ id: "k", key: generateKey() }] }),
      REQUESTS_FILE: join(dir, "requests.json"),
    };
    // One after the other: the first creates the records (and both products' schemas) alone.
    for (let i = 0; i < HOSTS; i++) started.push(await startServer(`host-${i + 1}`, { ...env, HOST_ROLE: i === 0 ? "seed" : "join" }, HOST));
  } catch (error) {
    await stop();
    throw error;
  }
  const hosts = started.slice(1);

  async function post<T>(host: ChildServer, step: string, sizes: Record<string, number> = {}): Promise<T> {
    const res = await fetch(`${host.url}/bench/${step}`, { method: "POST", body: JSON.stringify(sizes) });
    if (res.status !== 200) throw new Error(`${step} failed: ${await res.text()}`);
    return (await res.json()) as T;
  }
  const onEach = <T>(step: string, sizes: (index: number) => Record<string, number> = () => ({})) =>
    Promise.all(hosts.map((host, i) => post<T>(host, step, sizes(i))));
  const count = async (sql: string): Promise<number> => Number((await admin.query<{ n: string }>(sql)).rows[0]!.n);
  // Each host starts its share: RUNS split as evenly as it goes.
  const share = (i: number): number => Math.floor(RUNS / HOSTS) + (i < RUNS % HOSTS ? 1 : 0);

  /**
   * Waits until every delivery got its 200 and is recorded (`done` holds), then the rate from the
   * earliest start on any host to the last 200 on any host.
   */
  async function rateOf(starts: Started[], product: keyof Counters, done: () => Promise<boolean>): Promise<number> {
    const expected = starts.reduce((n, s) => n + s.deliveries, 0);
    const deadline = Date.now() + TIMEOUT_MS;
    let counters: Counters[] = [];
    for (;;) {
      counters = await onEach<Counters>("counters");
      const oks = counters.reduce((n, c) => n + c[product].oks, 0);
      if (oks >= expected && (await done())) break;
      if (Date.now() > deadline) throw new Error(`timed out: ${oks} of ${expected} ${product} deliveries answered 200`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await onEach("counters", () => ({ reset: 1 }));
    const lastOk = Math.max(...counters.map((c) => c[product].lastOk));
    return (expected / (lastOk - Math.min(...starts.map((s) => s.t0)))) * 1000;
  }

  /** Per fan-out sample (runplane's or graphile-worker's): the CPU each kind of process spent, per 10,000 deliveries. */
  const cpu: string[] = [];

  return {
    info: hosts[0]!.info,
    cpu,
    /** runplane: every host creates its share of runs (untimed), then starts all their stages at once. */
    async fanOut(): Promise<number> {
      await onEach("prepare", (i) => ({ runs: share(i) }));
      await onEach("counters", () => ({ reset: 1 }));
      const before = cpuSnapshot();
      const starts = await onEach<Started>("fanout");
      const rate = await rateOf(starts, "runplane", async () => (await count(`SELECT count(*) AS n FROM "${schema}".task_deliveries WHERE closed_at IS NULL`)) === 0);
      cpu.push(`runplane: ${cpuPer10k(before, cpuSnapshot(), starts.reduce((n, s) => n + s.deliveries, 0))}`);
      return rate;
    },
    /** graphile-worker: every host adds its share of runs' jobs, 10 per `addJobs`, all at once. */
    async graphile(): Promise<number> {
      await onEach("counters", () => ({ reset: 1 }));
      const before = cpuSnapshot();
      const starts = await onEach<Started>("graphile", (i) => ({ runs: share(i) }));
      const rate = await rateOf(starts, "graphile", async () => (await count(`SELECT count(*) AS n FROM "${graphileSchema}"._private_jobs`)) === 0);
      cpu.push(`graphile-worker: ${cpuPer10k(before, cpuSnapshot(), starts.reduce((n, s) => n + s.deliveries, 0))}`);
      return rate;
    },
    /** Raw undici: every host POSTs its share of the same bytes at its dispatcher's concurrency. */
    async raw(): Promise<number> {
      const runs = await onEach<{ requests: number; t0: number; t1: number }>("raw-posts", (i) => ({ requests: share(i) * TASKS_PER_RUN }));
      const total = runs.reduce((n, r) => n + r.requests, 0);
      return (total / (Math.max(...runs.map((r) => r.t1)) - Math.min(...runs.map((r) => r.t0)))) * 1000;
    },
    stop,
  };
}

const setup = (info: Record<string, string>): string =>
  `${RUNS * TASKS_PER_RUN} results: ${RUNS} runs x ${TASKS_PER_RUN} mandatory post_plan tasks, ${HOSTS} host processes on one PostgreSQL ` +
  `database (local, pool of 10 each), each starting half of the stages at once and running a dispatcher at concurrency ${info.concurrency}; ` +
  `from the first start on any host to the last 200 on any host; receiver: node:http in its own process`;

type Rig = Awaited<ReturnType<typeof startRig>>;

/** A fan-out row: runplane's rate over `baseline`'s, alternating samples on one rig. */
function fanOutScenario(name: string, baseline: (rig: Rig) => () => Promise<number>, target: number, describe: (info: Record<string, string>) => string): Scenario {
  return {
    name,
    async run(samples): Promise<ScenarioResult> {
      const rig = await startRig();
      try {
        const r = await alternate(samples, rig.fanOut, baseline(rig));
        const ratio = r.subject.median / r.baseline.median;
        return { name, unit: "req/s", ...r, ratio, target: `>= ${target.toFixed(2)}`, met: ratio >= target, notes: `${setup(rig.info)}; baseline: ${describe(rig.info)}; CPU per 10,000 deliveries, by sample: ${rig.cpu.join("; ")}` };
      } finally {
        await rig.stop();
      }
    },
  };
}

const againstRaw = fanOutScenario(
  "Fan-out, 2 hosts on PostgreSQL",
  (rig) => rig.raw,
  0.3,
  (info) => `the same ${info.bodyBytes}-byte signed requests by raw undici from both processes, ${info.concurrency} at a time each`,
);

const againstGraphile = fanOutScenario(
  "Fan-out vs graphile-worker, 2 hosts on PostgreSQL",
  (rig) => rig.graphile,
  1,
  (info) =>
    `graphile-worker 0.17.3 in the same processes on the same database, concurrency ${info.concurrency} each, local queue of 128, ` +
    `completion and failure batched over 250 ms, one addJobs of ${TASKS_PER_RUN} jobs per run, each job POSTing the same signed bytes with undici`,
);

const unreachable = await whyNoDatabase();
if (unreachable) process.stderr.write(`bench: PostgreSQL scenarios left out: ${unreachable} (set DATABASE_URL)\n`);

export const scenarios: Scenario[] = unreachable
  ? []
  : [readScenario("HTTP read, PostgreSQL", "hono", "postgres"), writeScenario("HTTP write, PostgreSQL", "postgres"), againstRaw, againstGraphile];
