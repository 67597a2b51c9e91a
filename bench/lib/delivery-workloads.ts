import { performance } from "node:perf_hooks";
import { Agent, request } from "undici";
import type { Keyring, Runplane, Storage } from "../../src/index.js";
import { runTaskRequestHeaders } from "../../src/domain/run-task-request.js";
import { deliveryPayloadBinding } from "../../src/services/task-deliveries.js";
import { cpuWindow } from "./cpu-snap.js";
import { profileWindow } from "./profile-window.js";
import { percentile } from "./stats.js";

/**
 * The measured workloads of bench/servers/delivery-server.ts, run inside that process so the
 * dispatcher, the callback API and the raw baseline share one process's conditions.
 */
export interface Workload {
  runplane: Runplane;
  /** Stops the running dispatcher (rows stay queued) and resolves a function that starts a fresh one. */
  pauseDispatcher(): Promise<() => void>;
  /** Notified on every 200 the dispatcher's transport receives. */
  okListeners: Set<() => void>;
  /** Attempts in flight at once, the dispatcher's and the raw baseline's. */
  concurrency: number;
  /** Real run task requests (url, signed headers, payload bytes), captured by {@link captureRequests}. */
  requests: RawRequest[];
}

export interface RawRequest {
  url: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

export const STAGE = "post_plan";
const TIMEOUT_MS = 300_000;

export async function createRuns(runplane: Runplane, workspaceId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const { run } = await runplane.runTasks.createRun({ workspaceId, message: "bench run", createdBy: "user-bench", configurationVersionId: "cv-bench" });
    ids.push(run.id);
  }
  return ids;
}

export function within<T>(promise: Promise<T>, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what()}`)), TIMEOUT_MS)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Starts one probe run's stage before any dispatcher runs and opens its outbox rows the way the
 * dispatcher does, so the baseline sends the bytes and headers runplane sends. The probe is then
 * canceled: the dispatcher closes its rows unsent.
 */
export async function captureRequests(runplane: Runplane, storage: Storage, keyring: Keyring, hmacKeys: Map<string, string>, workspaceId: string): Promise<RawRequest[]> {
  const [runId] = await createRuns(runplane, workspaceId, 1);
  const stage = await runplane.runTasks.startStage(runId!, STAGE);
  const requests: RawRequest[] = [];
  for (const result of await runplane.runTasks.listResults(stage.id)) {
    const [row] = await storage.taskDeliveries.listByResult(result.id);
    if (!row) throw new Error("probe run has no outbox row");
    const body = new TextEncoder().encode(keyring.open(row.payload, deliveryPayloadBinding(row.id)));
    const headers = runTaskRequestHeaders({ bytes: body, key: hmacKeys.get(row.taskId) ?? null, dialect: "default", userAgent: runplane.runTasks.settings.userAgent });
    requests.push({ url: row.url, headers, body });
  }
  await runplane.runTasks.cancelRun(runId!);
  return requests;
}

/**
 * `runs` runs of `workspaceId` (created first, untimed) get their post_plan stage started all at
 * once; the clock runs from the first startStage call to the last 200 the dispatcher receives.
 * Resolves once every delivery is also recorded, so no work spills into the next sample, with the
 * process CPU spent over that window (`cpuUs`, see {@link cpuWindow}).
 */
export async function fanOut(w: Workload, options: { workspaceId: string; runs: number }) {
  const { runTasks } = w.runplane;
  const ids = await createRuns(w.runplane, options.workspaceId, options.runs);
  const expected = ids.length * (await runTasks.workspaceTasks.list(options.workspaceId)).items.length;
  const mine = new Set(ids);
  let ok = 0;
  let lastOk = 0;
  let recorded = 0;
  const onOk = (): void => {
    ok++;
    lastOk = performance.now();
  };
  let off = (): void => undefined;
  const allRecorded = new Promise<void>((resolve) => {
    off = runTasks.on("result-status", (e) => {
      if (mine.has(e.runId) && e.from === "pending" && e.to === "running" && ++recorded === expected) resolve();
    });
  });
  w.okListeners.add(onOk);
  try {
    const profiled = await profileWindow("fanout");
    const cpu = cpuWindow();
    const t0 = performance.now();
    await Promise.all(ids.map((id) => runTasks.startStage(id, STAGE)));
    const startedMs = performance.now() - t0;
    await within(allRecorded, () => `${recorded} of ${expected} deliveries recorded`);
    const recordedMs = performance.now() - t0;
    const cpuUs = cpu();
    await profiled();
    const ms = lastOk - t0;
    return { requests: expected, oks: ok, ms, startedMs, recordedMs, perSecond: (expected / ms) * 1000, cpuUs };
  } finally {
    off();
    w.okListeners.delete(onOk);
  }
}

/**
 * Outbox depth: with the dispatcher stopped, `runs` stages of `workspaceId` are started (their
 * requests pile up due in the outbox, untimed); then a fresh dispatcher drains them. Resolves the
 * drain rate from its start to the last 200, and the process's RSS before queueing, once queued
 * and once drained.
 */
export async function outboxDepth(w: Workload, options: { workspaceId: string; runs: number }) {
  const { runTasks } = w.runplane;
  const ids = await createRuns(w.runplane, options.workspaceId, options.runs);
  const expected = ids.length * (await runTasks.workspaceTasks.list(options.workspaceId)).items.length;
  // After a full GC when the server runs with --expose-gc (the depth rig does): what stays held.
  const rss = (): number => {
    (globalThis as { gc?: () => void }).gc?.();
    return Math.round(process.memoryUsage().rss / 1e6);
  };
  const resume = await w.pauseDispatcher();
  const rssBefore = rss();
  for (let i = 0; i < ids.length; i += 1000) await Promise.all(ids.slice(i, i + 1000).map((id) => runTasks.startStage(id, STAGE)));
  const rssQueued = rss();
  let ok = 0;
  let lastOk = 0;
  let done = (): void => undefined;
  const drained = new Promise<void>((resolve) => (done = resolve));
  const onOk = (): void => {
    lastOk = performance.now();
    if (++ok === expected) done();
  };
  w.okListeners.add(onOk);
  try {
    const t0 = performance.now();
    resume();
    await within(drained, () => `${ok} of ${expected} queued deliveries answered`);
    const ms = lastOk - t0;
    return { requests: expected, ms, perSecond: (expected / ms) * 1000, rssBefore, rssQueued, rssDrained: rss() };
  } finally {
    w.okListeners.delete(onOk);
  }
}

const rawAgent = new Agent({ keepAliveTimeout: 60_000 });

/** Sends one captured request and checks the 200; `rawPosts` runs it `concurrency` at a time. */
export type Sender = (r: RawRequest) => Promise<void>;

const undiciSender: Sender = async (r) => {
  const res = await request(r.url, { dispatcher: rawAgent, method: "POST", headers: r.headers, body: r.body });
  await res.body.text();
  if (res.statusCode !== 200) throw new Error(`receiver answered ${res.statusCode}`);
};

/**
 * The baseline: the captured requests POSTed round-robin with undici (or `send`), `concurrency` at
 * a time; with the process CPU it took (`cpuUs`, see {@link cpuWindow}).
 */
export async function rawPosts(w: Workload, options: { requests: number }, send: Sender = undiciSender) {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < options.requests) await send(w.requests[next++ % w.requests.length]!);
  };
  const cpu = cpuWindow();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: w.concurrency }, worker));
  const ms = performance.now() - t0;
  return { requests: options.requests, ms, perSecond: (options.requests / ms) * 1000, cpuUs: cpu() };
}

/**
 * `runs` runs (created first, untimed) whose receiver calls back `passed` right after its 200 get
 * their stage started all at once; per run, the time from its startStage call to its stage-status
 * event reaching `passed`.
 */
export async function stageLatency(w: Workload, options: { workspaceId: string; runs: number }) {
  const { runTasks } = w.runplane;
  const ids = await createRuns(w.runplane, options.workspaceId, options.runs);
  const startedAt = new Map<string, number>();
  const latencies: number[] = [];
  const other: string[] = [];
  let off = (): void => undefined;
  const allFinal = new Promise<void>((resolve) => {
    off = runTasks.on("stage-status", (e) => {
      const t0 = startedAt.get(e.runId);
      if (t0 === undefined || e.to === "running") return;
      if (e.to === "passed") latencies.push(performance.now() - t0);
      else other.push(e.to);
      if (latencies.length + other.length === ids.length) resolve();
    });
  });
  try {
    const t0 = performance.now();
    await Promise.all(
      ids.map((id) => {
        startedAt.set(id, performance.now());
        return runTasks.startStage(id, STAGE);
      }),
    );
    await within(allFinal, () => `${latencies.length} of ${ids.length} stages passed`);
    const ms = performance.now() - t0;
    if (other.length > 0) throw new Error(`${other.length} stages did not pass (${[...new Set(other)].join(", ")})`);
    const sorted = latencies.sort((a, b) => a - b);
    return { runs: ids.length, ms, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1)! };
  } finally {
    off();
  }
}
