import { existsSync, readFileSync } from "node:fs";
import { Agent, request } from "undici";
import { openLoop, wallNow } from "../lib/open-loop.js";
import { startDeliveryRig } from "../lib/receiver.js";
import { percentile, series } from "../lib/stats.js";
import type { Scenario, ScenarioResult } from "./types.js";

/**
 * Steady state: what an integration and an API client feel while runs arrive at a
 * steady pace, rather than in one burst. BENCH_STEADY_SECONDS shortens the counted window while
 * iterating; the sizes docs/performance.md reports are the defaults. The rows run twice in one
 * run: with the SQLite file on the disk (the OS temp folder, or BENCH_STEADY_DISK_DIR) and on
 * tmpfs (/dev/shm), so the disk's share of every figure shows.
 */
const RATE = 50;
const READ_RATE = 200;
const SECONDS = Number(process.env.BENCH_STEADY_SECONDS ?? 60);
const WARMUP_SECONDS = Number(process.env.BENCH_STEADY_WARMUP ?? 5);
/** A sample takes a minute or more: at most this many. */
const MAX_SAMPLES = Number(process.env.BENCH_STEADY_SAMPLES ?? 3);

interface Percentiles {
  count: number;
  p50: number;
  p99: number;
  max: number;
}
interface Steady {
  received: Percentiles;
  passed: Percentiles;
  maxLagMs: number;
  started: number;
  /** The host's event-loop delay over the sample (monitorEventLoopDelay), ms. */
  hostLoop: { p99: number; max: number };
}

const agent = new Agent({ keepAliveTimeout: 60_000 });

/** `GET url` at READ_RATE per second, open loop, for the warm-up and the counted window; latency from each read's due time. */
async function apiReads(url: string, token: string, start: number): Promise<Percentiles & { maxLagMs: number }> {
  const countedFrom = start + WARMUP_SECONDS * 1000;
  const latencies: number[] = [];
  const loop = await openLoop({ rate: READ_RATE, count: READ_RATE * (WARMUP_SECONDS + SECONDS), start }, async (_, due) => {
    const res = await request(url, { dispatcher: agent, headers: { authorization: `Bearer ${token}` } });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`API read answered ${res.statusCode}`);
    if (due >= countedFrom) latencies.push(wallNow() - due);
  });
  if (loop.failures > 0) throw new Error(`${loop.failures} API reads failed: ${loop.firstFailure}`);
  const sorted = latencies.sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1)!, maxLagMs: loop.maxLagMs };
}

const ms = (n: number): string => (n >= 10 ? Math.round(n).toString() : n.toFixed(1));
const spread = (values: number[]): string => {
  const s = series(values);
  return `${ms(s.median)} ms (${ms(s.min)}-${ms(s.max)})`;
};

/** The file system type of the mount holding `path` (`ext4`, `tmpfs`), from /proc/mounts. */
function fileSystemOf(path: string): string {
  const mounts = readFileSync("/proc/mounts", "utf8").split("\n").map((line) => line.split(" "));
  const holding = mounts.filter(([, at]) => at !== undefined && (path === at || path.startsWith(at.endsWith("/") ? at : `${at}/`)));
  return holding.sort((a, b) => b[1]!.length - a[1]!.length)[0]?.[2] ?? "unknown";
}

interface Sample {
  steady: Steady;
  reads: Awaited<ReturnType<typeof apiReads>>;
}

/** The samples of one rig whose SQLite file is in `dbDir` (undefined: the OS temp folder, on the disk here). */
async function measureOn(samples: number, dbDir: string | undefined): Promise<{ measured: Sample[]; info: Record<string, string> }> {
  const rig = await startDeliveryRig(dbDir === undefined ? {} : { BENCH_DB_DIR: dbDir });
  try {
    const sizes = { rate: RATE, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS };
    const measured: Sample[] = [];
    for (let i = 0; i < Math.min(samples, MAX_SAMPLES); i++) {
      const { stageId } = await rig.measure<{ stageId: string }>("steady-prepare", sizes);
      const url = `${rig.server.url}/api/v2/task-stages/${stageId}?include=task-results`;
      // Both schedules begin about 50 ms after this point, in their own processes.
      const [steady, reads] = await Promise.all([rig.measure<Steady>("steady", sizes), apiReads(url, rig.server.info.token!, wallNow() + 50)]);
      measured.push({ steady, reads });
    }
    return { measured, info: rig.server.info };
  } finally {
    await rig.stop();
  }
}

/**
 * The rows of one file system. Targets hold "in every sample": a row is met when its worst
 * sample's p99 is under the limit, not its median.
 */
function rows(label: string, measured: Sample[], info: Record<string, string>): ScenarioResult[] {
  const where = `SQLite file on ${fileSystemOf(info.dbDir!)} (${info.dbDir}), synchronous FULL, writes ${info.writer === "thread" ? "in a writer thread with group commit (D37)" : "on the event loop"}`;
  const setup =
    `${RATE} runs/s x 2 mandatory post_plan tasks for ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up (started, not counted), ` +
    `${where}, dispatcher concurrency ${info.concurrency}; the receiver (own process) answers 200, ` +
    `then PATCHes the callback passed at once; beside them ${READ_RATE} API reads/s (GET /task-stages/:id?include=task-results, ` +
    `a team token) from the bench process; fixed-rate open-loop schedules, every latency from the event's scheduled time, so a ` +
    `stall counts in full (no coordinated omission); largest scheduler lag: stage starts ${spread(measured.map((m) => m.steady.maxLagMs))}, ` +
    `reads ${spread(measured.map((m) => m.reads.maxLagMs))}`;
  const row = (name: string, pick: (m: Sample) => Percentiles, limit: number, what: string): ScenarioResult => {
    const p99 = series(measured.map((m) => pick(m).p99));
    return {
      name: `Steady state${label}, ${name}`,
      unit: "ms p99",
      subject: p99,
      target: `p99 < ${limit} ms in every sample`,
      met: p99.max < limit,
      notes:
        `${what}; p50 ${spread(measured.map((m) => pick(m).p50))}, max ${spread(measured.map((m) => pick(m).max))}, ` +
        `${measured.map((m) => pick(m).count).join(", ")} counted; ${setup}`,
    };
  };
  const loop = series(measured.map((m) => m.steady.hostLoop.max));
  return [
    row("request received", (m) => m.steady.received, 25, "from a stage's scheduled start to each of its requests arriving in full at the receiver (its wall clock, same machine)"),
    row("stage passed", (m) => m.steady.passed, 60, "from a stage's scheduled start to its stage-status event `passed` in the host"),
    row("API read", (m) => m.reads, 10, "from each read's scheduled time to its 200 read in full"),
    {
      name: `Steady state${label}, host event-loop delay`,
      unit: "ms max",
      subject: loop,
      target: "max < 50 ms in every sample",
      met: loop.max < 50,
      notes: `the host's event-loop delay over each sample (monitorEventLoopDelay): p99 ${spread(measured.map((m) => m.steady.hostLoop.p99))}; ${where}`,
    },
  ];
}

/** tmpfs where there is one: the same rows without the disk's flushes, to tell the disk's share. */
const TMPFS = existsSync("/dev/shm") ? "/dev/shm" : undefined;

const steadyState: Scenario = {
  name: "Steady state",
  async run(samples): Promise<ScenarioResult[]> {
    // The disk first, then tmpfs, each in its own rig (a fresh file and host process).
    const disk = await measureOn(samples, process.env.BENCH_STEADY_DISK_DIR);
    const results = rows("", disk.measured, disk.info);
    if (TMPFS !== undefined) {
      const memory = await measureOn(samples, TMPFS);
      results.push(...rows(" on tmpfs", memory.measured, memory.info));
    }
    return results;
  },
};

export const scenarios: Scenario[] = [steadyState];
