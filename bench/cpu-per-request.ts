import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import pg from "pg";
import { startServer, type ChildServer } from "./lib/child-server.js";
import { benchSchema, DATABASE_URL, dropSchemas } from "./lib/postgres.js";

/**
 * Dev tool: server CPU time per request (utime+stime of the server process), robust to a busy
 * machine, and the req/s of the same runs (which a busy machine does move). A `*-postgres` mode gets
 * a fresh schema (dropped at the end) and its connections an application_name, so the CPU of the
 * PostgreSQL backends serving it is reported too (`+ pg`): on 2 cores that work runs beside node's.
 * Usage: npx tsx bench/cpu-per-request.ts hono-runplane-sqlite hono-runplane-postgres ...
 */
const modes = process.argv.slice(2);
/** utime+stime of a process, or of one of its threads with `/proc/<pid>/task/<tid>/stat`. */
const ticksOf = (pid: number, stat = `/proc/${pid}/stat`): number => {
  try {
    const f = readFileSync(stat, "utf8").split(") ")[1]!.split(" ");
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0; // a backend that ended
  }
};
const sum = (pids: number[]): number => pids.reduce((total, pid) => total + ticksOf(pid), 0);

interface Subject extends ChildServer {
  backends(): Promise<number[]>;
}
async function start(mode: string): Promise<Subject> {
  if (!mode.endsWith("-postgres")) return { ...(await startServer(mode)), backends: async () => [] };
  const schema = benchSchema("cpu");
  const url = new URL(DATABASE_URL);
  url.searchParams.set("application_name", schema);
  const server = await startServer(mode, { DATABASE_URL: url.toString(), BENCH_PG_SCHEMA: schema });
  const backends = async (): Promise<number[]> => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [schema]);
      return rows.map((r) => r.pid);
    } finally {
      await client.end();
    }
  };
  return { ...server, backends, stop: () => server.stop().then(() => dropSchemas(schema)) };
}

for (const mode of modes) {
  const s = await start(mode);
  const url = `${s.url}${s.info.listPath}`;
  // Timed runs: autocannon ends an `amount` run on its one-second tick, which would quantize req/s.
  const run = (duration: number) => autocannon({ url, connections: 50, duration, headers: { authorization: `Bearer ${s.info.token}` } });
  // Warm-up: the first seconds under load also pay V8's optimizing compiler on its own threads
  // (a first 3-second sample after a one-second warm-up read 2-6x the next ones here).
  await run(3);
  const backends = await s.backends();
  const node: string[] = [];
  // The main thread alone: what bounds req/s when node is the busiest process (GC helpers and the
  // SQLite writer thread run beside it).
  const main: string[] = [];
  const mainTicks = (): number => ticksOf(s.child.pid!, `/proc/${s.child.pid!}/task/${s.child.pid!}/stat`);
  const database: string[] = [];
  const rates: string[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = ticksOf(s.child.pid!);
    const m0 = mainTicks();
    const b0 = sum(backends);
    const r = await run(3);
    // Ticks are 10 ms: 10,000 µs each.
    node.push((((ticksOf(s.child.pid!) - t0) * 10_000) / r["2xx"]).toFixed(1));
    main.push((((mainTicks() - m0) * 10_000) / r["2xx"]).toFixed(1));
    database.push((((sum(backends) - b0) * 10_000) / r["2xx"]).toFixed(1));
    rates.push(`${Math.round(r["2xx"] / r.duration)}`);
  }
  const pgPart = backends.length > 0 ? `  + pg (${backends.length} backends): ${database.join(" ")}` : "";
  console.log(mode.padEnd(24), "µs CPU/request:", node.join(" "), " main thread:", main.join(" "), pgPart, " req/s:", rates.join(" "));
  await s.stop();
}
