import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPostgresStorage } from "../adapters/postgres/index.js";
import { createSqliteStorage } from "../adapters/sqlite/index.js";
import { createRunplane, generateKey, silentLogger, type Storage } from "../src/index.js";
import { benchSchema, DATABASE_URL, dropSchemas } from "./lib/postgres.js";

/**
 * In-process target for the read path, without HTTP: `GET /workspaces/:id/vars` (20 variables)
 * through `runplane.handler`, `concurrency` requests in flight (50, as the HTTP read bench), and the
 * CPU this process spent per request (PostgreSQL's own CPU is not counted). Storage: `sqlite` (a
 * file, as the HTTP bench), `sqlite-memory`, or `postgres` (a fresh schema, dropped at the end).
 * Usage: `npx tsx bench/profile-read.ts [storage] [requests] [concurrency]`; profile it with
 * `node --cpu-prof --import tsx bench/profile-read.ts ...`.
 */
const [kind = "sqlite", count = "20000", inFlight = "50"] = process.argv.slice(2);
const n = Number(count);
const concurrency = Number(inFlight);
const dir = mkdtempSync(join(tmpdir(), "rp-profile-read-"));
const schema = benchSchema("read");
const storage: Storage =
  kind === "postgres"
    ? await createPostgresStorage(DATABASE_URL, { schema })
    : createSqliteStorage(new Database(kind === "sqlite-memory" ? ":memory:" : join(dir, "bench.db")));
const runplane = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k", key: generateKey() }] } });
const d = runplane.directory;
await d.organizations.create({ name: "bench" });
await d.projects.create({ id: "prj-bench", name: "p", organization: "bench" });
await d.workspaces.create({ id: "ws-bench", name: "bench-ws", organization: "bench", projectId: "prj-bench" });
await d.teams.create({ id: "team-owners", name: "owners", owners: true, organization: "bench" });
const { token } = await d.createApiToken({ organization: "bench", kind: "team", teamId: "team-owners" });
for (let i = 0; i < 20; i++) await runplane.variables.create("ws-bench", { key: `key_${i}`, value: `value-${i}-${"x".repeat(24)}`, category: i % 2 ? "env" : "config" });
const headers = { authorization: `Bearer ${token}` };
const one = async (): Promise<void> => {
  const res = await runplane.handler(new Request("http://127.0.0.1/api/v2/workspaces/ws-bench/vars", { headers }));
  if (res.status !== 200) throw new Error(`answered ${res.status}`);
  await res.arrayBuffer();
};
async function load(total: number): Promise<void> {
  let left = total;
  const worker = async () => {
    while (left-- > 0) await one();
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
await load(Math.min(n, 5000));
for (let round = 0; round < 3; round++) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await load(n);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  console.log(`${kind}: ${n} requests, ${concurrency} in flight: ${(((cpu.user + cpu.system) / n)).toFixed(1)} µs CPU/request, ${((ms / n) * 1000).toFixed(1)} µs wall/request`);
}
await runplane.close();
rmSync(dir, { recursive: true, force: true });
if (kind === "postgres") await dropSchemas(schema);
