// Local, uncommitted: server CPU (+ its PostgreSQL backends) per write request, from /proc.
import autocannon from "autocannon";
import { readFileSync } from "node:fs";
import pg from "pg";
import { startServer } from "./lib/child-server.js";
import { benchSchema, DATABASE_URL, dropSchemas } from "./lib/postgres.js";

const LIST = "/api/v2/workspaces/ws-bench/vars";
const ticks = (pid: number): number => {
  try { const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" "); return Number(f[11]) + Number(f[12]); } catch { return 0; }
};
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
async function backends(app: string): Promise<number[]> {
  return (await admin.query("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [app])).rows.map((r) => r.pid as number);
}
function load(url: string, token: string, amount: number) {
  return autocannon({
    url, connections: 10, amount,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" },
    requests: [
      { method: "POST", path: LIST, setupRequest: (req: any, context: any) => { const n = (context.n ?? 0) + 1; context.n = n;
          return { ...req, body: JSON.stringify({ data: { type: "vars", attributes: { key: `k_${process.hrtime.bigint()}_${n}`, value: "secret", category: "env", sensitive: true } } }) }; },
        onResponse: (_s: number, body: string, context: any) => { context.id = JSON.parse(body).data.id; } },
      { method: "DELETE", setupRequest: (req: any, context: any) => ({ ...req, path: `${LIST}/${String(context.id)}` }) },
    ] as any,
  });
}
for (const adapter of (process.argv[2] ?? "postgres,memory").split(",")) {
  const schema = benchSchema("wcpu");
  const app = `rpw${process.pid}`;
  const s = await startServer(`hono-runplane-${adapter}`, { DATABASE_URL, BENCH_PG_SCHEMA: schema, PGAPPNAME: app });
  await load(s.url, s.info.token!, 4000);
  const out: string[] = [];
  for (let i = 0; i < 3; i++) {
    const pids = adapter === "postgres" ? await backends(app) : [];
    const t0 = ticks(s.child.pid!); const p0 = pids.reduce((a, p) => a + ticks(p), 0); const w0 = performance.now();
    const r = await load(s.url, s.info.token!, 10000);
    const ok = r["2xx"]; const el = (performance.now() - w0) / 1000;
    const host = ((ticks(s.child.pid!) - t0) * 10_000) / ok; const db = ((pids.reduce((a, p) => a + ticks(p), 0) - p0) * 10_000) / ok;
    if (r.non2xx || r.errors) throw new Error(`non2xx ${r.non2xx} errors ${r.errors}`);
    out.push(`${(ok / el).toFixed(0)} req/s, host ${host.toFixed(0)} us/req, postgres backends ${db.toFixed(0)} us/req (${pids.length})`);
  }
  console.log(adapter.padEnd(9), out.join(" | "));
  await s.stop();
  if (adapter === "postgres") await dropSchemas(schema);
}
await admin.end();
