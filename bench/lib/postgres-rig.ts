import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { generateKey } from "../../src/index.js";
import { startServer, type ChildServer } from "./child-server.js";
import { cpuOfPids, cpuSpent, postgresPids } from "./cpu-snap.js";
import { benchSchema, DATABASE_URL, dropSchemas } from "./postgres.js";

/**
 * The PostgreSQL delivery rig (bench/scenarios/postgres.ts, bench/scenarios/peer.ts): a receiver
 * answering 200, and HOSTS postgres-host processes on one fresh schema (plus fresh graphile-worker
 * and peer schemas) with one keyring. Each runs runplane's dispatcher and a graphile-worker runner,
 * and each starts its share of every workload, so both products share the work as replicas would.
 */
export const RUNS = Number(process.env.BENCH_PG_FANOUT_RUNS ?? 1000);
export const HOSTS = 2;
export const TASKS_PER_RUN = 10;
const TIMEOUT_MS = 180_000;

const HOST = fileURLToPath(new URL("../servers/postgres-host.ts", import.meta.url));
const RECEIVER = fileURLToPath(new URL("../servers/receiver.ts", import.meta.url));

interface Started {
  t0: number;
  deliveries: number;
}
type Product = "runplane" | "graphile" | "peer";
type Counters = Record<Product, { oks: number; lastOk: number }>;

/** One measured workload: its rate and the CPU it cost, in µs per delivery, by process. */
export interface Gauge {
  rate: number;
  deliveries: number;
  /** The host processes (user + system, all threads, /proc). */
  hostsUs: number;
  /** The PostgreSQL backends of the product's connections (found by application_name), /proc. */
  databaseUs: number;
  /**
   * Every postgres process on the machine (backends of anyone, WAL writer, checkpointer); one that
   * ended in the window (another client's backend) loses its last stretch.
   */
  clusterUs: number;
  receiverUs: number;
}

export async function startPostgresRig() {
  const schema = benchSchema("fanout");
  const graphileSchema = `${schema}_gw`;
  const peerSchema = `${schema}_peer`;
  const appName = `rpb${process.pid}${Math.random().toString(36).slice(2, 6)}`;
  const dir = mkdtempSync(join(tmpdir(), "rp-bench-pg-"));
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  admin.on("error", () => undefined);
  const started: ChildServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(started.map((s) => s.stop()));
    await admin.end();
    await dropSchemas(schema, graphileSchema, peerSchema);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    started.push(await startServer("receiver", {}, RECEIVER));
    const env = {
      DATABASE_URL,
      BENCH_PG_SCHEMA: schema,
      GRAPHILE_SCHEMA: graphileSchema,
      PEER_SCHEMA: peerSchema,
      APP_NAME: appName,
      RECEIVER_URL: started[0]!.url,
      RUNPLANE_KEYRING: JSON.stringify({ keys: [{ id: "k", key: generateKey() }] }),
      REQUESTS_FILE: join(dir, "requests.json"),
      // Every CPU window opens after a full GC in every host.
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --expose-gc`.trim(),
    };
    // One after the other: the first creates the records (and every schema) alone.
    for (let i = 0; i < HOSTS; i++) started.push(await startServer(`host-${i + 1}`, { ...env, HOST_ROLE: i === 0 ? "seed" : "join" }, HOST));
  } catch (error) {
    await stop();
    throw error;
  }
  const [receiver, ...hosts] = started as [ChildServer, ...ChildServer[]];
  const hostPids = hosts.map((h) => h.child.pid!);

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
  const backends = async (suffix: string): Promise<number[]> =>
    (await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, [`${appName}-${suffix}`])).rows.map((r) => r.pid);

  /**
   * Waits until every delivery got its 200 and is recorded (`done` holds), then the rate from the
   * earliest start on any host to the last 200 on any host.
   */
  async function rateOf(starts: Started[], product: Product, done: () => Promise<boolean>): Promise<{ rate: number; deliveries: number }> {
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
    return { rate: (expected / (lastOk - Math.min(...starts.map((s) => s.t0)))) * 1000, deliveries: expected };
  }

  /** Runs `work` after a full GC in every host (uncounted, see `cpuWindow`) and reads what each kind of process spent. */
  async function gauge(backendsOf: string | null, work: () => Promise<{ rate: number; deliveries: number }>): Promise<Gauge> {
    await onEach("gc");
    const before = {
      hosts: cpuOfPids(hostPids),
      receiver: cpuOfPids([receiver.child.pid!]),
      db: cpuOfPids(backendsOf ? await backends(backendsOf) : []),
      all: cpuOfPids(postgresPids()),
    };
    const { rate, deliveries } = await work();
    const db = cpuOfPids(backendsOf ? await backends(backendsOf) : []);
    const per = (seconds: number): number => (seconds * 1e6) / deliveries;
    return {
      rate,
      deliveries,
      hostsUs: per(cpuSpent(before.hosts, cpuOfPids(hostPids))),
      databaseUs: per(cpuSpent(before.db, db)),
      clusterUs: per(cpuSpent(before.all, cpuOfPids(postgresPids()))),
      receiverUs: per(cpuSpent(before.receiver, cpuOfPids([receiver.child.pid!]))),
    };
  }
  const jobsLeft = async (): Promise<boolean> => (await count(`SELECT count(*) AS n FROM "${graphileSchema}"._private_jobs`)) === 0;

  return {
    info: hosts[0]!.info,
    /** runplane: every host creates its share of runs (untimed), then starts all their stages at once. */
    async fanOut(): Promise<Gauge> {
      await onEach("prepare", (i) => ({ runs: share(i) }));
      await onEach("counters", () => ({ reset: 1 }));
      const open = async (): Promise<boolean> => (await count(`SELECT count(*) AS n FROM "${schema}".task_deliveries WHERE closed_at IS NULL`)) === 0;
      return gauge("rp", async () => rateOf(await onEach<Started>("fanout"), "runplane", open));
    },
    /** graphile-worker POSTing precomputed bytes: every host adds its share of runs' jobs, 10 per `addJobs`, all at once. */
    async graphile(): Promise<Gauge> {
      await onEach("counters", () => ({ reset: 1 }));
      return gauge("gw", async () => rateOf(await onEach<Started>("graphile", (i) => ({ runs: share(i) })), "graphile", jobsLeft));
    },
    /** The peer doing runplane's work (bench/lib/peer-task.ts): results stored untimed, then every run's jobs added at once. */
    async peer(): Promise<Gauge> {
      await onEach("peer-prepare", (i) => ({ runs: share(i) }));
      await onEach("counters", () => ({ reset: 1 }));
      return gauge("gw", async () => rateOf(await onEach<Started>("peer"), "peer", jobsLeft));
    },
    /** Raw undici: every host POSTs its share of the same bytes at its dispatcher's concurrency. */
    async raw(): Promise<Gauge> {
      return gauge(null, async () => {
        const runs = await onEach<{ requests: number; t0: number; t1: number }>("raw-posts", (i) => ({ requests: share(i) * TASKS_PER_RUN }));
        const deliveries = runs.reduce((n, r) => n + r.requests, 0);
        return { deliveries, rate: (deliveries / (Math.max(...runs.map((r) => r.t1)) - Math.min(...runs.map((r) => r.t0)))) * 1000 };
      });
    },
    stop,
  };
}

export type PostgresRig = Awaited<ReturnType<typeof startPostgresRig>>;
