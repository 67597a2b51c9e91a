import { readFileSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { Logger, makeWorkerUtils, run, type Runner } from "graphile-worker";
import { Agent, request } from "undici";
import { createPostgresStorage } from "../../adapters/postgres/index.js";
import { DEFAULT_CONCURRENCY } from "../../src/delivery/dispatcher.js";
import { createConsoleLogger, createDispatcher, createEgress, createKeyring, createRunplane, type HttpTransport } from "../../src/index.js";
import { toNodeListener } from "../../src/node.js";
import { listenForBench, type ControlRoutes } from "../lib/control.js";
import { captureRequests, rawPosts, type RawRequest, type Workload } from "../lib/delivery-workloads.js";
import { peerHost } from "../lib/peer-host.js";
import { peerRunTask } from "../lib/peer-task.js";

/**
 * One host of the PostgreSQL delivery scenarios (bench/scenarios/postgres.ts), in its own process:
 * runplane on `createPostgresStorage` with its dispatcher, plus a graphile-worker runner on the same
 * database, both idle until the bench process drives them with `POST /bench/<step>`. Several hosts
 * share one schema. Environment: DATABASE_URL, BENCH_PG_SCHEMA (runplane's schema), GRAPHILE_SCHEMA,
 * RECEIVER_URL, RUNPLANE_KEYRING (the hosts' shared keyring, JSON), REQUESTS_FILE (the first host,
 * HOST_ROLE=seed, creates the records and writes the captured requests there; the others read it),
 * DISPATCH_CONCURRENCY (also graphile-worker's concurrency), PEER_SCHEMA (the peer's results table,
 * bench/lib/peer-task.ts), APP_NAME (a prefix: runplane's connections carry `<prefix>-rp` and
 * graphile-worker's `<prefix>-gw` as application_name, so the bench can find their backends).
 */
const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`postgres-host: ${name} is required`);
  return value;
};
const databaseUrl = env("DATABASE_URL");
const receiverUrl = env("RECEIVER_URL");
const requestsFile = env("REQUESTS_FILE");
const seeding = process.env.HOST_ROLE === "seed";
const concurrency = Number(process.env.DISPATCH_CONCURRENCY ?? DEFAULT_CONCURRENCY);
const WORKSPACE = "ws-fanout";
const TASKS = 10;
const taskUrl = (i: number): string => `${receiverUrl}/ok/${i}`;
const hmacKey = (i: number): string => `bench-hmac-key-${i}-${"k".repeat(24)}`;
/** DATABASE_URL with an application_name, which PostgreSQL shows for each backend in pg_stat_activity. */
const named = (suffix: string): string => {
  const url = new URL(databaseUrl);
  url.searchParams.set("application_name", `${env("APP_NAME")}-${suffix}`);
  return url.toString();
};

const routes: ControlRoutes = {};
const http = await listenForBench(routes);
const origin = http.origin;

const storage = await createPostgresStorage(named("rp"), { schema: env("BENCH_PG_SCHEMA") });
const keyring = createKeyring(JSON.parse(env("RUNPLANE_KEYRING")) as Parameters<typeof createKeyring>[0]);
const runplane = createRunplane({ storage, keyring, logger: createConsoleLogger(), publicUrl: origin, egress: { allow: ["127.0.0.1/32"] } });
http.serve(toNodeListener(runplane.handler));

/** The first host creates the records and captures the bytes runplane sends; the others read them. */
async function seed(): Promise<RawRequest[]> {
  const d = runplane.directory;
  await d.organizations.create({ name: "bench" });
  await d.projects.create({ id: "prj-bench", name: "p", organization: "bench" });
  await d.workspaces.create({ id: WORKSPACE, name: WORKSPACE, organization: "bench", projectId: "prj-bench" });
  const hmacKeys = new Map<string, string>();
  for (let i = 0; i < TASKS; i++) {
    const key = hmacKey(i);
    const task = await runplane.runTasks.tasks.create("bench", { name: `task-${i}`, url: taskUrl(i), "hmac-key": key });
    hmacKeys.set(task.id, key);
    await runplane.runTasks.workspaceTasks.create(WORKSPACE, task.id, { "enforcement-level": "mandatory", stages: ["post_plan"] });
  }
  const captured = await captureRequests(runplane, storage, keyring, hmacKeys, WORKSPACE);
  writeFileSync(requestsFile, JSON.stringify(captured.map((r) => ({ ...r, body: Buffer.from(r.body).toString("base64") }))));
  return captured;
}
const requests: RawRequest[] = seeding
  ? await seed()
  : (JSON.parse(readFileSync(requestsFile, "utf8")) as (RawRequest & { body: string })[]).map((r) => ({ ...r, body: Buffer.from(r.body, "base64") }));

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between the hosts' processes. */
const now = (): number => performance.timeOrigin + performance.now();

/** 200s received, by runplane's dispatcher or by graphile-worker's jobs, and when the last came. */
const counters = { runplane: { oks: 0, lastOk: 0 }, graphile: { oks: 0, lastOk: 0 }, peer: { oks: 0, lastOk: 0 } };
const egress = createEgress({ allow: ["127.0.0.1/32"], userAgent: runplane.runTasks.settings.userAgent });
const transport: HttpTransport = {
  async send(req) {
    const res = await egress.send(req);
    if (res.status === 200) {
      counters.runplane.oks++;
      counters.runplane.lastOk = now();
    }
    return res;
  },
  close: () => egress.close(),
};
const dispatcher = createDispatcher(runplane, { transport, concurrency });
dispatcher.start();

// graphile-worker with the batching its documentation recommends for many short jobs: a local
// queue (fetching as many jobs per query as runplane's dispatcher claims) and batched completion.
const graphileSchema = env("GRAPHILE_SCHEMA");
const quiet = new Logger(() => (level, message) => {
  if (level === "error") process.stderr.write(`graphile-worker: ${message}\n`);
});
const jobAgent = new Agent({ keepAliveTimeout: 60_000 });
// The peer builds the payload runplane would send from this host: the same workspace, links and agent.
const sent = JSON.parse(new TextDecoder().decode(requests[0]!.body)) as Record<string, string | null>;
const peer = peerRunTask({
  table: `"${env("PEER_SCHEMA")}".task_results`,
  urls: { publicUrl: runplane.runTasks.settings.publicUrl, appUrl: runplane.runTasks.settings.appUrl, basePath: runplane.runTasks.settings.basePath },
  organization: "bench",
  workspace: { id: WORKSPACE, name: WORKSPACE, workingDirectory: sent.workspace_working_directory ?? "" },
  downloadable: sent.configuration_version_download_url !== null,
  userAgent: runplane.runTasks.settings.userAgent,
  tasks: Array.from({ length: TASKS }, (_, i) => ({ url: taskUrl(i), hmacKey: hmacKey(i) })),
  onOk: () => {
    counters.peer.oks++;
    counters.peer.lastOk = now();
  },
});
const graphile: Runner = await run({
  connectionString: named("gw"),
  schema: graphileSchema,
  concurrency,
  noHandleSignals: true,
  logger: quiet,
  preset: { worker: { localQueue: { size: Math.max(128, 4 * concurrency) }, completeJobBatchDelay: 250, failJobBatchDelay: 250 } },
  taskList: {
    // The same signed bytes runplane sends for the same task; anything but a 200 fails the job.
    async deliver(payload) {
      const r = requests[(payload as { task: number }).task % requests.length]!;
      const res = await request(r.url, { dispatcher: jobAgent, method: "POST", headers: r.headers, body: r.body });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`receiver answered ${res.statusCode}`);
      counters.graphile.oks++;
      counters.graphile.lastOk = now();
    },
    "run-task": peer.task,
  },
});
const graphileUtils = await makeWorkerUtils({ connectionString: named("gw"), schema: graphileSchema, logger: quiet });
const peerSide = peerHost({ utils: graphileUtils, schema: env("PEER_SCHEMA"), tasks: TASKS, now });
if (seeding) await peerSide.createTable();

let prepared: string[] = [];
// Only the raw baseline runs through the shared workloads here; the outbox depth row is SQLite's.
const pauseDispatcher = (): Promise<() => void> => Promise.reject(new Error("postgres-host: no outbox depth workload"));
const workload: Workload = { runplane, okListeners: new Set(), concurrency, requests, pauseDispatcher };

Object.assign(routes, {
  /** Creates `runs` runs (untimed), whose post_plan stages `fanout` starts. */
  "/bench/prepare": async ({ runs = 500 }) => {
    prepared = [];
    for (let i = 0; i < runs; i++) {
      const { run: created } = await runplane.runTasks.createRun({ workspaceId: WORKSPACE, message: "bench run", createdBy: "user-bench", configurationVersionId: "cv-bench" });
      prepared.push(created.id);
    }
    return { runs: prepared.length };
  },
  /** Starts every prepared stage at once: each start enqueues its 10 deliveries in one transaction. */
  "/bench/fanout": async () => {
    const t0 = now();
    await Promise.all(prepared.map((id) => runplane.runTasks.startStage(id, "post_plan")));
    return { t0, startedMs: now() - t0, deliveries: prepared.length * TASKS };
  },
  /** The same deliveries as graphile-worker jobs: one `addJobs` of 10 jobs per run, all at once. */
  "/bench/graphile": async ({ runs = 500 }) => {
    const t0 = now();
    const jobs = Array.from({ length: TASKS }, (_, task) => ({ identifier: "deliver", payload: { task } }));
    await Promise.all(Array.from({ length: runs }, () => graphileUtils.addJobs(jobs)));
    return { t0, startedMs: now() - t0, deliveries: runs * TASKS };
  },
  /** The captured requests POSTed by raw undici, `concurrency` at a time. */
  "/bench/raw-posts": async ({ requests: count = 5000 }) => {
    const t0 = now();
    const result = await rawPosts(workload, { requests: count });
    return { ...result, t0, t1: now() };
  },
  /** Reads the 200 counters; `reset: 1` zeroes them. */
  "/bench/counters": async ({ reset = 0 }) => {
    const read = structuredClone(counters);
    if (reset) for (const c of Object.values(counters)) Object.assign(c, { oks: 0, lastOk: 0 });
    return read;
  },
  /** A full GC when the process runs with --expose-gc: CPU windows open and close with one. */
  "/bench/gc": async () => {
    (globalThis as { gc?: () => void }).gc?.();
    return {};
  },
  ...peerSide.routes,
} satisfies ControlRoutes);

process.stdout.write(`READY ${JSON.stringify({ url: origin, concurrency: String(concurrency), bodyBytes: String(requests[0]?.body.length ?? 0) })}\n`);
process.on("SIGTERM", () => {
  http.close();
  void dispatcher
    .stop({ graceMs: 1_000 })
    .then(() => Promise.all([graphile.stop(), graphileUtils.release(), runplane.close(), transport.close(), jobAgent.close(), peer.close()]))
    .finally(() => process.exit(0));
});
