import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { writerThreadOf } from "../../adapters/sqlite/writer-client.js";
import { DEFAULT_CONCURRENCY } from "../../src/delivery/dispatcher.js";
import { createConsoleLogger, createDispatcher, createEgress, createKeyring, createRunplane, generateKey, type HttpTransport } from "../../src/index.js";
import { toNodeListener } from "../../src/node.js";
import { listenForBench, type ControlRoutes } from "../lib/control.js";
import { captureRequests, fanOut, outboxDepth, rawPosts, stageLatency, type Workload } from "../lib/delivery-workloads.js";
import { steadyWorkload, type SteadySizes } from "../lib/steady-workload.js";

/**
 * The runplane side of the Fan-out, Stage latency, Steady state and CPU per delivery scenarios, in
 * its own process: a SQLite file
 * (synchronous FULL, the default), the API on an ephemeral loopback port (integrations call back
 * there), and one dispatcher sending through an egress that allows only 127.0.0.1/32. The bench
 * process drives it with `POST /bench/<workload>` (a JSON body of sizes) and gets the measurement
 * back as JSON. Environment: RECEIVER_URL (bench/servers/receiver.ts), DISPATCH_CONCURRENCY
 * (default: the dispatcher's default), BENCH_STORAGE (`sqlite`, the default, or `memory`),
 * BENCH_DB_DIR (where the SQLite file goes; default the OS temp folder), BENCH_SQLITE_WRITER
 * (`thread`, the default as in the reference server, or `in-thread`, decision D37). READY
 * carries an API token of the owners team for the API reads beside the steady-state load.
 */
const receiverUrl = process.env.RECEIVER_URL;
if (!receiverUrl) throw new Error("delivery-server: RECEIVER_URL is required");
const concurrency = Number(process.env.DISPATCH_CONCURRENCY ?? DEFAULT_CONCURRENCY);

// Bound before runplane exists: the callback URLs in the requests need the real port.
const routes: ControlRoutes = {};
const http = await listenForBench(routes);
const origin = http.origin;

const dir = mkdtempSync(join(process.env.BENCH_DB_DIR ?? tmpdir(), "rp-bench-dlv-"));
const writer = process.env.BENCH_SQLITE_WRITER === "in-thread" ? "in-thread" : "thread";
// BENCH_STORAGE=memory runs the same workloads on the memory adapter (the outbox without a disk).
const database = process.env.BENCH_STORAGE === "memory" ? null : new Database(join(dir, "bench.db"));
// Experiments only: BENCH_WAL_AUTOCHECKPOINT sets SQLite's wal_autocheckpoint (pages; 0 turns it off).
if (database && process.env.BENCH_WAL_AUTOCHECKPOINT) database.pragma(`wal_autocheckpoint = ${Number(process.env.BENCH_WAL_AUTOCHECKPOINT)}`);
const storage = database ? createSqliteStorage(database, { writer }) : createMemoryStorage();
// The writer thread opens its own connection: wait for it, so the first write does not carry its start.
await writerThreadOf(storage)?.ready;
const keyring = createKeyring({ keys: [{ id: "k", key: generateKey() }] });
const runplane = createRunplane({
  storage,
  keyring,
  // Warnings and errors only, on stderr: a bench that fails should say why.
  logger: createConsoleLogger(),
  publicUrl: origin,
  egress: { allow: ["127.0.0.1/32"] },
});
http.serve(toNodeListener(runplane.handler));

const d = runplane.directory;
await d.organizations.create({ name: "bench" });
await d.projects.create({ id: "prj-bench", name: "p", organization: "bench" });

const hmacKeys = new Map<string, string>();
/** A workspace with `count` mandatory post_plan tasks at `<receiver><path>/<i>`, each with its own HMAC key. */
async function workspaceWithTasks(id: string, path: string, count: number): Promise<void> {
  await d.workspaces.create({ id, name: id, organization: "bench", projectId: "prj-bench" });
  for (let i = 0; i < count; i++) {
    const key = generateKey();
    const task = await runplane.runTasks.tasks.create("bench", { name: `${id}-${i}`, url: `${receiverUrl}${path}/${i}`, "hmac-key": key });
    hmacKeys.set(task.id, key);
    await runplane.runTasks.workspaceTasks.create(id, task.id, { "enforcement-level": "mandatory", stages: ["post_plan"] });
  }
}
await workspaceWithTasks("ws-fanout", "/ok", 10);
await workspaceWithTasks("ws-latency", "/callback", 2);
await workspaceWithTasks("ws-steady", "/timed", 2);
await d.teams.create({ id: "team-owners", name: "owners", owners: true, organization: "bench" });
const { token } = await d.createApiToken({ organization: "bench", kind: "team", teamId: "team-owners" });
const steady = steadyWorkload(runplane, { workspaceId: "ws-steady", receiverUrl });
const steadySizes = (s: Record<string, number>): SteadySizes => ({ rate: s.rate ?? 50, seconds: s.seconds ?? 60, warmupSeconds: s.warmupSeconds ?? 5 });

// The dispatcher's own guarded transport, wrapped only to time the last 200 it receives. While
// `local` is set (the fanout-local workload) it answers 200 in process: what runplane's own work
// per delivery costs without any HTTP.
const okListeners = new Set<() => void>();
const egress = createEgress({ allow: ["127.0.0.1/32"], userAgent: runplane.runTasks.settings.userAgent });
let local = false;
const LOCAL_OK = { status: 200, headers: {}, body: "", bodyTruncated: false };
const transport: HttpTransport = {
  async send(req) {
    const res = local ? LOCAL_OK : await egress.send(req);
    if (res.status === 200) for (const listener of okListeners) listener();
    return res;
  },
  close: () => egress.close(),
};
const requests = await captureRequests(runplane, storage, keyring, hmacKeys, "ws-fanout");
let dispatcher = createDispatcher(runplane, { transport, concurrency });
async function pauseDispatcher(): Promise<() => void> {
  await dispatcher.stop({ graceMs: 1_000 });
  return () => {
    dispatcher = createDispatcher(runplane, { transport, concurrency });
    dispatcher.start();
  };
}
const workload: Workload = { runplane, okListeners, concurrency, requests, pauseDispatcher };
dispatcher.start();

Object.assign(routes, {
  "/bench/fanout": (s: Record<string, number>) => fanOut(workload, { workspaceId: "ws-fanout", runs: s.runs ?? 1000 }),
  "/bench/raw-posts": (s: Record<string, number>) => rawPosts(workload, { requests: s.requests ?? 10_000 }),
  // The captured requests through the dispatcher's guarded egress instead of bare undici.
  "/bench/egress-posts": (s: Record<string, number>) =>
    rawPosts(workload, { requests: s.requests ?? 10_000 }, async (r) => {
      const res = await egress.send({ url: r.url, headers: r.headers, body: r.body });
      if (res.status !== 200) throw new Error(`receiver answered ${res.status}`);
    }),
  "/bench/fanout-local": async (s: Record<string, number>) => {
    local = true;
    try {
      return await fanOut(workload, { workspaceId: "ws-fanout", runs: s.runs ?? 1000 });
    } finally {
      local = false;
    }
  },
  "/bench/latency": (s: Record<string, number>) => stageLatency(workload, { workspaceId: "ws-latency", runs: s.runs ?? 1000 }),
  "/bench/depth": (s: Record<string, number>) => outboxDepth(workload, { workspaceId: "ws-fanout", runs: s.runs ?? 1000 }),
  "/bench/steady-prepare": (s: Record<string, number>) => steady.prepare(steadySizes(s)),
  "/bench/steady": (s: Record<string, number>) => steady.run(steadySizes(s)),
} satisfies ControlRoutes);

process.stdout.write(`READY ${JSON.stringify({ url: origin, token, concurrency: String(concurrency), writer: database ? writer : "none", dbDir: dir, bodyBytes: String(requests[0]?.body.length ?? 0) })}\n`);
process.on("SIGTERM", () => {
  http.close();
  void dispatcher
    .stop({ graceMs: 1_000 })
    .then(() => Promise.all([runplane.close(), transport.close()]))
    .finally(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
});
