import { startServer, type ChildServer } from "../lib/child-server.js";
import { requestsPerSecond } from "../lib/http-load.js";
import { benchSchema, DATABASE_URL, dropSchemas } from "../lib/postgres.js";
import { alternate } from "../lib/stats.js";
import type { Scenario, ScenarioResult } from "./types.js";

const LIST = "/api/v2/workspaces/ws-bench/vars";

/** Where the runplane server under test stores: the SQLite file, or PostgreSQL (a schema of its own). */
export type BenchStorage = "sqlite" | "postgres";

/** Starts `<framework>-runplane-<storage>`; a PostgreSQL server gets a fresh schema, dropped at stop. */
async function startRunplaneServer(framework: "hono" | "express", storage: BenchStorage): Promise<ChildServer> {
  if (storage === "sqlite") return startServer(`${framework}-runplane-sqlite`);
  const schema = benchSchema("http");
  const server = await startServer(`${framework}-runplane-postgres`, { DATABASE_URL, BENCH_PG_SCHEMA: schema });
  return { ...server, stop: () => server.stop().then(() => dropSchemas(schema)) };
}

const STORED_IN: Record<BenchStorage, string> = { sqlite: "SQLite file (synchronous FULL)", postgres: "PostgreSQL (local, pool of 10)" };

/**
 * One unmeasured run of each side first: a fresh server's first seconds open its pool, prepare its
 * statements and warm the JIT (on PostgreSQL the first write sample ran 30 % slow).
 */
async function warmedAlternate(samples: number, subject: () => Promise<number>, baseline: () => Promise<number>) {
  await subject();
  await baseline();
  return alternate(samples, subject, baseline);
}

/** A runplane list through a framework mount against the same framework returning the same bytes. */
export function readScenario(name: string, framework: "hono" | "express", storage: BenchStorage = "sqlite"): Scenario {
  return {
    name,
    async run(samples): Promise<ScenarioResult> {
      const subject = await startRunplaneServer(framework, storage);
      const baseline = await startServer(`${framework}-fixed-sqlite`);
      try {
        const load = (url: string, token: string) => () => requestsPerSecond({ url: `${url}${LIST}`, headers: { authorization: `Bearer ${token}` } });
        const r = await warmedAlternate(samples, load(subject.url, subject.info.token!), load(baseline.url, baseline.info.token!));
        const ratio = r.subject.median / r.baseline.median;
        const notes = `${subject.info.bodyBytes} byte body, 50 connections${storage === "sqlite" ? "" : `, ${STORED_IN[storage]}`}`;
        return { name, unit: "req/s", ...r, ratio, target: ">= 0.60", met: ratio >= 0.6, notes };
      } finally {
        await Promise.all([subject.stop(), baseline.stop()]);
      }
    },
  };
}

/** POST then DELETE a sensitive variable (sealed on write): the storage under test against the memory adapter. */
export function writeScenario(name: string, storage: BenchStorage = "sqlite"): Scenario {
  return { name, run: (samples) => measureWrite(name, storage, samples) };
}

async function measureWrite(name: string, storage: BenchStorage, samples: number): Promise<ScenarioResult> {
  const subject = await startRunplaneServer("hono", storage);
  const baseline = await startServer("hono-runplane-memory");
  try {
    const load = (url: string, token: string) => () =>
      requestsPerSecond({
        url,
        connections: 10,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" },
        requests: [
          {
            method: "POST",
            path: LIST,
            // A fresh key per request: `[<id>]` is not available per request here, so use the context counter.
            setupRequest: (req, context) => {
              const n = ((context.n as number | undefined) ?? 0) + 1;
              context.n = n;
              const key = `k_${process.hrtime.bigint()}_${n}`;
              return { ...req, body: JSON.stringify({ data: { type: "vars", attributes: { key, value: "secret", category: "env", sensitive: true } } }) };
            },
            onResponse: (_status, body, context) => {
              context.id = (JSON.parse(body) as { data: { id: string } }).data.id;
            },
          },
          { method: "DELETE", setupRequest: (req, context) => ({ ...req, path: `${LIST}/${String(context.id)}` }) },
        ],
      });
    const r = await warmedAlternate(samples, load(subject.url, subject.info.token!), load(baseline.url, baseline.info.token!));
    const ratio = r.subject.median / r.baseline.median;
    return { name, unit: "req/s", ...r, ratio, target: ">= 0.50", met: ratio >= 0.5, notes: `POST+DELETE of a sensitive variable, ${STORED_IN[storage]} vs memory` };
  } finally {
    await Promise.all([subject.stop(), baseline.stop()]);
  }
}

export const scenarios: Scenario[] = [readScenario("HTTP read", "hono"), readScenario("HTTP read, Express", "express"), writeScenario("HTTP write")];
