import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startServer } from "../lib/child-server.js";
import { series } from "../lib/stats.js";
import type { Scenario, ScenarioResult } from "./types.js";

const SERVER = fileURLToPath(new URL("../servers/run-tasks-server.ts", import.meta.url));
const RUNS = Number(process.env.BENCH_MEMORY_RUNS ?? 10_000);
const RESULTS_PER_RUN = 10;
const OUTCOMES_PER_RESULT = 3;
const MB = 1024 * 1024;
/**
 * Where the server keeps its SQLite file. The file is read and written through syscalls, never
 * mapped, so its pages are kernel page cache, not the process's RSS, wherever it lives; on tmpfs
 * the ~460 MB it grows to cost no disk time, which keeps the scenario inside its time budget.
 */
const DB_DIR = process.env.BENCH_MEMORY_DB_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : undefined);

interface Reading {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  dbBytes: number;
}

/** One reading of the server's memory, taken right after a forced full GC in the server. */
async function read(url: string): Promise<Reading> {
  const response = await fetch(`${url}/bench/memory`);
  if (!response.ok) throw new Error(`memory reading failed: ${response.status}`);
  return (await response.json()) as Reading;
}

/** `count` readings 100 ms apart, after one discarded: the first GC after a burst still returns memory. */
async function readings(url: string, count: number): Promise<Reading[]> {
  await read(url);
  const out: Reading[] = [];
  for (let i = 0; i < count; i++) {
    out.push(await read(url));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return out;
}

const mb = (bytes: number): number => bytes / MB;
const median = (values: number[]): number => series(values).median;

/**
 * RSS of the SQLite-file server once it has stored 100,000 results with outcomes, against the same
 * server idle. Both are read in one process (idle first), each after a forced GC, so they are what
 * the process retains.
 */
const memory: Scenario = {
  name: "Memory",
  async run(samples): Promise<ScenarioResult> {
    const gc = `${process.env.NODE_OPTIONS ?? ""} --expose-gc`.trim();
    const server = await startServer("memory", { NODE_OPTIONS: gc, ...(DB_DIR ? { BENCH_DB_DIR: DB_DIR } : {}) }, SERVER);
    try {
      const idle = await readings(server.url, samples);
      const response = await fetch(`${server.url}/bench/store?runs=${RUNS}&outcomes=${OUTCOMES_PER_RESULT}`, { method: "POST" });
      if (!response.ok) throw new Error(`storing failed: ${response.status} ${await response.text()}`);
      const stored = (await response.json()) as { results: number; outcomes: number; ms: number };
      const after = await readings(server.url, samples);
      const subject = series(after.map((r) => mb(r.rss)));
      const baseline = series(idle.map((r) => mb(r.rss)));
      const change = (label: string, key: keyof Reading) =>
        `${label} ${mb(median(idle.map((r) => r[key]))).toFixed(1)} -> ${mb(median(after.map((r) => r[key]))).toFixed(1)} MB`;
      return {
        name: "Memory",
        unit: "MB RSS",
        subject,
        baseline,
        ratio: subject.median / baseline.median,
        target: "reported",
        notes:
          `${stored.results.toLocaleString("en-US")} results (${RUNS.toLocaleString("en-US")} runs x ${RESULTS_PER_RUN} tasks, ` +
          `${stored.outcomes.toLocaleString("en-US")} outcomes) stored through runTasks.createRun/startStage/callback (programmatic, 8 runs in flight) in ${Math.round(stored.ms / 1000)} s; ` +
          `${change("V8 heap used", "heapUsed")}, ${change("heap total", "heapTotal")}, ${change("external", "external")}; SQLite file ${mb(after[after.length - 1]!.dbBytes).toFixed(0)} MB in ${DB_DIR ?? "the temp dir"} (synchronous=NORMAL); ` +
          `each sample is one reading after a forced GC (idle ones before storing, the rest after, the first of each discarded)`,
      };
    } finally {
      await server.stop();
    }
  },
};

export const scenarios: Scenario[] = [memory];
