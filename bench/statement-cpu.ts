/**
 * CPU per statement of the PostgreSQL adapter's wrappers (deadline and timeouts, decision D39), against a bare
 * `SELECT 1` round trip on a checked-out node-postgres client measured in the same run.
 * Not part of `npm run bench`: `nice -n 10 npx tsx bench/statement-cpu.ts [iterations]` (`ROUNDS`, default 5).
 *
 * Each variant runs `SELECT 1` one at a time (awaited), so its CPU per iteration is the client
 * library, the wrapper and the event loop's share of one round trip; the PostgreSQL server's CPU
 * is another process's and not counted. Variants alternate round by round, so drift on
 * a loaded machine hits all of them; each row is the median round.
 */
import pg from "pg";
import { boundedPool } from "../adapters/postgres/bounded-pool.js";
import { Deadline } from "../adapters/postgres/deadline.js";
import { run, sql, transaction } from "../adapters/postgres/driver.js";
import { withRequestDeadline } from "../src/storage/request-deadline.js";

const URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const N = Number(process.argv[2] ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const TIMEOUT_MS = 10_000;

const pool = new pg.Pool({ connectionString: URL, max: 1 });
const bounded = boundedPool(pool, TIMEOUT_MS);
const one = sql("SELECT 1 AS one");
const client = await pool.connect();
client.release();

type Variant = { name: string; per: number; op: () => Promise<unknown> };
const statements = (k: number) => async (db: pg.PoolClient | { query: (c: pg.QueryConfig) => Promise<unknown> }) => {
  for (let i = 0; i < k; i++) await run(db as never, one);
};
const variants: Variant[] = [
  { name: "bare SELECT 1 on a checked-out client (baseline)", per: 1, op: async () => { const c = await pool.connect(); try { await c.query("SELECT 1"); } finally { c.release(); } } },
  { name: "pool.query, node-postgres alone", per: 1, op: () => pool.query("SELECT 1") },
  { name: "adapter run(), unbounded pool (named statement)", per: 1, op: () => run(pool as never, one) },
  { name: "adapter run(), bounded pool: autocommit with its own Deadline", per: 1, op: () => run(bounded, one) },
  { name: "bounded autocommit, 5 in one request deadline", per: 5, op: () => withRequestDeadline(async () => { for (let i = 0; i < 5; i++) await run(bounded, one); }) },
  // What one deadline per request (not per statement) could cost: one checkout, one timer.
  { name: "5 statements on one checked-out client, no deadline (floor)", per: 5, op: async () => { const c = await pool.connect(); try { await statements(5)(c); } finally { c.release(); } } },
  {
    name: "5 statements on one checked-out client under one Deadline, each raced",
    per: 5,
    op: async () => {
      const d = new Deadline(Date.now() + TIMEOUT_MS);
      const c = await pool.connect();
      try {
        for (let i = 0; i < 5; i++) await d.race(run(c as never, one), () => Promise.reject(new Error("late")));
      } finally {
        c.release();
        d.end();
      }
    },
  },
  { name: "transaction of 1 statement, unbounded (BEGIN, stmt, COMMIT)", per: 1, op: () => transaction(pool as never, statements(1) as never) },
  { name: "transaction of 1 statement, bounded (BEGIN+SET LOCAL, stmt, COMMIT)", per: 1, op: () => transaction(bounded, statements(1) as never) },
  { name: "transaction of 5 statements, unbounded", per: 5, op: () => transaction(pool as never, statements(5) as never) },
  { name: "transaction of 5 statements, bounded", per: 5, op: () => transaction(bounded, statements(5) as never) },
  { name: "Deadline alone: new Deadline + end (a timer), no I/O", per: 1, op: async () => new Deadline(Date.now() + TIMEOUT_MS).end() },
  {
    name: "Deadline alone: race of a resolved promise, no I/O",
    per: 1,
    op: async () => {
      const d = new Deadline(Date.now() + TIMEOUT_MS);
      await d.race(Promise.resolve(1), () => Promise.resolve(0));
      d.end();
    },
  },
];

async function measure(v: Variant): Promise<number> {
  for (let i = 0; i < 50; i++) await v.op(); // warm
  const start = process.cpuUsage();
  for (let i = 0; i < N; i++) await v.op();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (N * v.per);
}

const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
for (let round = 0; round < ROUNDS; round++) for (const v of variants) samples.get(v.name)!.push(await measure(v));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = median(samples.get(variants[0]!.name)!);
console.log(`${N} iterations x ${ROUNDS} rounds; CPU us per statement (median round, min-max), ratio to the baseline`);
for (const v of variants) {
  const xs = samples.get(v.name)!;
  console.log(`| ${v.name} | ${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)}) | ${(median(xs) / base).toFixed(2)} |`);
}
await pool.end();
