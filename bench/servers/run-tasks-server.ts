import { serve } from "@hono/node-server";
import Database from "better-sqlite3";
import { Hono } from "hono";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteStorage, type SqliteStorageOptions } from "../../adapters/sqlite/index.js";
import { createKeyring, createRunplane, generateKey, silentLogger, type HttpTransport, type Runplane, type TaskResultView } from "../../src/index.js";
import { deliveryPayloadBinding } from "../../src/services/task-deliveries.js";
import type { Storage } from "../../src/storage/types.js";
import { callbackBody } from "../lib/run-task-fixtures.js";

/**
 * The run task bench server (Callback ingest, Memory), runplane in Hono over a SQLite file, in its
 * own process. Prints `READY {json}` once listening on an ephemeral loopback port.
 *
 * - `callback`: CALLBACK_RUNS runs whose post_plan stage (2 tasks) is started, so every result is
 *   waiting for its callback; the file named `tokens` has a `<result id> <access token> <level>`
 *   line per result.
 * - `memory`: an idle server with 10 tasks attached; `GET /bench/memory` forces a GC and answers
 *   the process's memory, `POST /bench/store?runs=N` stores N runs of 10 called-back results.
 */
const mode = process.argv[2] ?? "callback";
const dir = mkdtempSync(join(process.env.BENCH_DB_DIR ?? tmpdir(), "rp-bench-rt-"));
const dbPath = join(dir, "bench.db");
// Also on a crash: a failed run must not leave a database of hundreds of MB behind.
process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
const keyring = createKeyring({ keys: [{ id: "k", key: generateKey() }] });
// Task saves send a verification request; nothing here may leave the process (no dispatcher runs).
const transport: HttpTransport = {
  send: async () => ({ status: 200, headers: {}, body: "", bodyTruncated: false }),
  close: async () => {},
};
const open = (options: SqliteStorageOptions = {}): { storage: Storage; runplane: Runplane } => {
  const storage = createSqliteStorage(new Database(dbPath), options);
  const runplane = createRunplane({ storage, logger: silentLogger, keyring, transport, egress: { allow: ["127.0.0.1/32"] } });
  return { storage, runplane };
};

async function seedDirectory(runplane: Runplane, tasks: number): Promise<void> {
  const d = runplane.directory;
  await d.organizations.create({ name: "bench" });
  await d.projects.create({ id: "prj-bench", name: "p", organization: "bench" });
  await d.workspaces.create({ id: "ws-bench", name: "bench-ws", organization: "bench", projectId: "prj-bench" });
  for (let i = 0; i < tasks; i++) {
    const task = await runplane.runTasks.tasks.create("bench", { name: `scanner-${i}`, url: `http://127.0.0.1:9/hook/${i}`, "hmac-key": `hmac-${i}-${"k".repeat(24)}` });
    await runplane.runTasks.workspaceTasks.create("ws-bench", task.id, { "enforcement-level": i % 2 ? "advisory" : "mandatory", stages: ["post_plan"] });
  }
}

/** The callback token of a started result, read from its sealed outbox payload like a test's transport would see it. */
async function tokenOf(storage: Storage, resultId: string): Promise<string> {
  const [row] = await storage.taskDeliveries.listByResult(resultId);
  if (!row) throw new Error(`no delivery for ${resultId}`);
  return (JSON.parse(keyring.open(row.payload, deliveryPayloadBinding(row.id))) as { access_token: string }).access_token;
}

/**
 * Creates `runs` runs and starts their post_plan stage; hands every result with its token to
 * `each`. `parallel` runs are in flight at once and the results of one stage are handed over
 * together, as a busy host's runs and an integration's callbacks would arrive.
 */
async function startRuns(
  runplane: Runplane,
  storage: Storage,
  runs: number,
  each: (result: TaskResultView, token: string) => Promise<void> | void,
  parallel = 1,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < runs; i = next++) {
      const { run, stages } = await runplane.runTasks.createRun({ workspaceId: "ws-bench", configurationVersionId: "cv-bench", message: `run ${i}` });
      await runplane.runTasks.startStage(run.id, "post_plan");
      const results = await runplane.runTasks.listResults(stages[0]!.id);
      await Promise.all(results.map(async (result) => each(result, await tokenOf(storage, result.id))));
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

let runplane: Runplane;
const app = new Hono();
let info: Record<string, string> = {};

if (mode === "callback") {
  const runs = Number(process.env.CALLBACK_RUNS ?? 5000);
  const started = performance.now();
  // Seeding is not measured: it commits with synchronous=NORMAL, then the file is reopened with the
  // adapter's default (FULL) for the load.
  const seed = open({ synchronous: "NORMAL" });
  await seedDirectory(seed.runplane, 2);
  const lines: string[] = [];
  await startRuns(seed.runplane, seed.storage, runs, (r, token) => void lines.push(`${r.id} ${token} ${r.enforcementLevel}`), 8);
  await seed.runplane.close();
  const tokens = join(dir, "tokens.txt");
  writeFileSync(tokens, `${lines.join("\n")}\n`);
  runplane = open().runplane;
  info = { tokens, results: String(lines.length), seedMs: String(Math.round(performance.now() - started)) };
} else if (mode === "memory") {
  // RSS does not depend on when pages reach the disk; NORMAL keeps 100,000 callbacks within budget.
  const served = open({ synchronous: "NORMAL" });
  runplane = served.runplane;
  await seedDirectory(runplane, 10);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("the memory server needs --expose-gc");
  app.get("/bench/memory", (c) => {
    gc();
    gc();
    return c.json({ ...process.memoryUsage(), dbBytes: fileBytes(dbPath) + fileBytes(`${dbPath}-wal`) });
  });
  app.post("/bench/store", async (c) => {
    const runs = Number(c.req.query("runs") ?? 10_000);
    const outcomes = Number(c.req.query("outcomes") ?? 3);
    const texts = { passed: callbackBody("passed", outcomes), failed: callbackBody("failed", outcomes) };
    const started = performance.now();
    let results = 0;
    const callback = (r: TaskResultView, token: string): Promise<void> =>
      // Parsed per callback, as a request body would be, so no input object is shared between rows.
      runplane.runTasks.callback(r.id, token, JSON.parse(results++ % 4 === 3 ? texts.failed : texts.passed));
    await startRuns(runplane, served.storage, runs, callback, Number(c.req.query("parallel") ?? 8));
    return c.json({ results, outcomes: results * outcomes, ms: Math.round(performance.now() - started) });
  });
} else {
  throw new Error(`unknown mode ${mode}`);
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

app.all("/api/v2/*", (c) => runplane.handler(c.req.raw));
const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
server.once("listening", () => {
  const address = server.address() as { port: number };
  process.stdout.write(`READY ${JSON.stringify({ url: `http://127.0.0.1:${address.port}`, dbPath, ...info })}\n`);
});
process.on("SIGTERM", () => {
  server.close();
  void runplane.close().then(() => process.exit(0));
});
