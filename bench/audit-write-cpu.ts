/**
 * decision D53/D59: CPU per audited write, in process, with the audit trail and without it. Not part
 * of `npm run bench`: `nice -n 10 npx tsx bench/audit-write-cpu.ts [sqlite|postgres] [pairs]`
 * (`ROUNDS`, default 5). Each pair is the bench's HTTP write (POST then DELETE of a sensitive
 * variable) through `runplane.handler`, one request at a time; the two instances alternate round by
 * round so a loaded machine's drift hits both, and each row is the median round of this process's
 * CPU (`process.cpuUsage`, user + system) per pair. On PostgreSQL the server's own CPU is another
 * process's and not counted (its round trips are: the client's share of each).
 */
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPostgresStorage } from "../adapters/postgres/index.js";
import { createSqliteStorage } from "../adapters/sqlite/index.js";
import { createRunplane, generateKey, silentLogger, type Storage } from "../src/index.js";
import { benchSchema, DATABASE_URL, dropSchemas } from "./lib/postgres.js";

const kind = process.argv[2] === "postgres" ? "postgres" : "sqlite";
const PAIRS = Number(process.argv[3] ?? 500);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const dir = mkdtempSync(join(tmpdir(), "rp-audit-cpu-"));
const schemas: string[] = [];

async function instance(audit: boolean) {
  const schema = benchSchema(audit ? "audit_cpu_on" : "audit_cpu_off");
  if (kind === "postgres") schemas.push(schema);
  const stored: Storage =
    kind === "postgres" ? await createPostgresStorage(DATABASE_URL, { schema }) : createSqliteStorage(new Database(join(dir, `${audit}.db`)), process.env.SYNC ? { synchronous: process.env.SYNC as "FULL" } : {});
  const storage = audit ? stored : { ...stored, audit: undefined };
  const runplane = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k", key: generateKey() }] } });
  const d = runplane.directory;
  await d.organizations.create({ name: "bench" });
  await d.projects.create({ id: "prj-bench", name: "p", organization: "bench" });
  await d.workspaces.create({ id: "ws-bench", name: "bench-ws", organization: "bench", projectId: "prj-bench" });
  await d.teams.create({ id: "team-owners", name: "owners", owners: true, organization: "bench" });
  const { token } = await d.createApiToken({ organization: "bench", kind: "team", teamId: "team-owners" });
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" };
  const url = "http://127.0.0.1/api/v2/workspaces/ws-bench/vars";
  let n = 0;
  const pair = async () => {
    const body = JSON.stringify({ data: { type: "vars", attributes: { key: `k_${++n}`, value: "secret", category: "env", sensitive: true } } });
    const created = await runplane.handler(new Request(url, { method: "POST", headers, body }));
    if (created.status !== 201) throw new Error(`POST ${created.status} ${await created.text()}`);
    const { data } = (await created.json()) as { data: { id: string } };
    const deleted = await runplane.handler(new Request(`${url}/${data.id}`, { method: "DELETE", headers }));
    if (deleted.status !== 204) throw new Error(`DELETE ${deleted.status}`);
  };
  return { name: audit ? "with the trail" : "without the trail", pair, close: () => runplane.close() };
}

const variants = [await instance(true), await instance(false)];
const rounds = new Map<string, number[]>(variants.map((v) => [v.name, []]));
for (const v of variants) for (let i = 0; i < Math.min(200, PAIRS); i++) await v.pair(); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const v of variants) {
    const before = process.cpuUsage();
    for (let i = 0; i < PAIRS; i++) await v.pair();
    const spent = process.cpuUsage(before);
    rounds.get(v.name)!.push((spent.user + spent.system) / PAIRS);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = median(rounds.get("without the trail")!);
console.log(`${kind}, ${PAIRS} POST+DELETE pairs a round, ${ROUNDS} rounds; CPU µs per pair (median round), rounds`);
for (const [name, xs] of rounds) console.log(`  ${name.padEnd(20)} ${median(xs).toFixed(1).padStart(7)}  x${(median(xs) / base).toFixed(2)}  [${xs.map((x) => x.toFixed(0)).join(" ")}]`);
for (const v of variants) await v.close();
if (schemas.length > 0) await dropSchemas(...schemas);
rmSync(dir, { recursive: true, force: true });
