import Database from "better-sqlite3";
import { createSqliteStorage } from "../adapters/sqlite/index.js";
import { createRunplane, generateKey, silentLogger } from "../src/index.js";

/** In-process profile target for the read path: `node --cpu-prof --import tsx bench/profile-read.ts`. */
const runplane = createRunplane({ storage: createSqliteStorage(new Database(":memory:")), logger: silentLogger, keyring: { keys: [{ id: "k", key: generateKey() }] } });
const d = runplane.directory;
await d.organizations.create({ name: "bench" });
await d.projects.create({ id: "prj-bench", name: "p", organization: "bench" });
await d.workspaces.create({ id: "ws-bench", name: "bench-ws", organization: "bench", projectId: "prj-bench" });
await d.teams.create({ id: "team-owners", name: "owners", owners: true, organization: "bench" });
const { token } = await d.createApiToken({ organization: "bench", kind: "team", teamId: "team-owners" });
for (let i = 0; i < 20; i++) await runplane.variables.create("ws-bench", { key: `key_${i}`, value: `value-${i}`, category: "env" });
const req = () => new Request("http://127.0.0.1/api/v2/workspaces/ws-bench/vars", { headers: { authorization: `Bearer ${token}` } });
const n = Number(process.argv[2] ?? 5000);
const t0 = performance.now();
for (let i = 0; i < n; i++) await (await runplane.handler(req())).text();
const ms = performance.now() - t0;
console.log(`${n} requests in ${ms.toFixed(0)} ms: ${((ms / n) * 1000).toFixed(1)} µs/request`);
