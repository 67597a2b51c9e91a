import { Agent, request } from "undici";
import { createMemoryStorage } from "../adapters/memory/index.js";
import { newId, randomSecret, sha256Hex } from "../src/crypto/random.js";
import { createAttemptTelemetry } from "../src/delivery/attempt-telemetry.js";
import { transitionResult, transitionStage } from "../src/domain/stage-machine.js";
import { runTaskRequestHeaders } from "../src/domain/run-task-request.js";
import { runTaskRequestTemplate } from "../src/domain/request-template.js";
import { createConsoleLogger, createDispatcher, createEgress, createKeyring, createRunplane, generateKey, type HttpTransport, type Runplane } from "../src/index.js";
import type { RunRecord, TaskDeliveryRecord } from "../src/schemas/run-task-records.js";
import { createAttemptWindow } from "../src/services/attempt-window.js";
import type { ServiceContext } from "../src/services/context.js";
import { attemptRecord, type AttemptObservation } from "../src/services/delivery-attempts.js";
import { deliveryBuilder, deliveryPayloadBinding } from "../src/services/delivery-builder.js";
import type { DeliveryAttempt } from "../src/services/delivery-request.js";
import { createFreshPayloads } from "../src/services/fresh-payloads.js";
import { createRunTaskEmitter } from "../src/services/run-task-events.js";
import { resolveRunTaskSettings } from "../src/services/run-task-settings.js";
import { createStageEmitters } from "../src/services/stage-events.js";
import { advance } from "../src/services/stage-transitions.js";
import type { ClaimedDelivery, DeliverySettlement } from "../src/storage/run-tasks-types.js";
import type { GuardedResultWrite, Storage } from "../src/storage/types.js";
import { startServer } from "./lib/child-server.js";
import { createRuns } from "./lib/delivery-workloads.js";
import { profileWindow } from "./lib/profile-window.js";
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";

/**
 * CPU per delivery, step by step: `nice npx tsx --expose-gc bench/delivery-steps.ts [rounds]`.
 * Each contract step of one delivery is measured alone in a loop (process.cpuUsage, user + system)
 * and set against the measured total of the in-process fan-out on the memory adapter with a
 * transport that answers 200 at once (the "answered 200 in process" figure of the CPU per delivery
 * rows): what the steps do not account for is overhead. The undici POST to a receiver in its own
 * process (and the same through runplane's guarded egress) is measured apart: it is not in the
 * in-process total. Each figure is the median of the rounds. `STEPS_RUNS` (default 500) runs x 10
 * tasks per fan-out; `STEPS_TOTAL_ONLY=1` measures only the total (before/after comparisons);
 * `BENCH_PROFILE_DIR=/tmp/prof` writes each measured fan-out's CPU profile there.
 */
const ROUNDS = Number(process.argv[2] ?? 5);
const RUNS = Number(process.env.STEPS_RUNS ?? 500);
const TOTAL_ONLY = process.env.STEPS_TOTAL_ONLY === "1";
const TASKS = 10;
const STAGE = "post_plan";
const N = 20_000;
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const cpuSince = (t0: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(t0);
  return used.user + used.system;
};

/** CPU microseconds per call of `step` over `n` calls, after a warm-up of n / 10. */
function perCall(n: number, step: (i: number) => void): number {
  for (let i = 0; i < n / 10; i++) step(i);
  gc();
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) step(i);
  return cpuSince(t0) / n;
}

/** CPU microseconds per unit of `body`, which does `units` units. */
async function perUnit(units: number, body: () => Promise<void>): Promise<number> {
  gc();
  const t0 = process.cpuUsage();
  await body();
  return cpuSince(t0) / units;
}

interface Instance {
  runplane: Runplane;
  storage: Storage & ReturnType<typeof createMemoryStorage>;
  keyring: ReturnType<typeof createKeyring>;
  hmacKeys: string[];
}

/** A runplane on the memory adapter with one workspace of TASKS mandatory post_plan tasks at the receiver. */
async function instance(receiverUrl: string): Promise<Instance> {
  const storage = createMemoryStorage();
  const keyring = createKeyring({ keys: [{ id: "k", key: generateKey() }] });
  const runplane = createRunplane({ storage, keyring, logger: createConsoleLogger(), publicUrl: "http://127.0.0.1:9", egress: { allow: ["127.0.0.1/32"] } });
  const d = runplane.directory;
  await d.organizations.create({ name: "bench" });
  await d.projects.create({ id: "prj-bench", name: "p", organization: "bench" });
  await d.workspaces.create({ id: "ws-fanout", name: "ws-fanout", organization: "bench", projectId: "prj-bench" });
  const hmacKeys: string[] = [];
  for (let i = 0; i < TASKS; i++) {
    const key = generateKey();
    hmacKeys.push(key);
    const task = await runplane.runTasks.tasks.create("bench", { name: `t-${i}`, url: `${receiverUrl}/ok/${i}`, "hmac-key": key });
    await runplane.runTasks.workspaceTasks.create("ws-fanout", task.id, { "enforcement-level": "mandatory", stages: [STAGE] });
  }
  return { runplane, storage: storage as Instance["storage"], keyring, hmacKeys };
}

/** The in-process fan-out: RUNS stages started at once until every 200 is recorded; CPU us per delivery. */
async function fanOutTotal(rp: Runplane): Promise<number> {
  const ids = await createRuns(rp, "ws-fanout", RUNS);
  const mine = new Set(ids);
  let recorded = 0;
  let off = (): void => undefined;
  const all = new Promise<void>((resolve) => {
    off = rp.runTasks.on("result-status", (e) => {
      if (mine.has(e.runId) && e.from === "pending" && e.to === "running" && ++recorded === RUNS * TASKS) resolve();
    });
  });
  // With BENCH_PROFILE_DIR, each measured fan-out's CPU profile is written there (fanout-<n>.cpuprofile).
  const profiled = await profileWindow("fanout");
  const allocations = await allocationWindow();
  const us = await perUnit(RUNS * TASKS, async () => {
    await Promise.all(ids.map((id) => rp.runTasks.startStage(id, STAGE)));
    await all;
  });
  await profiled();
  await allocations();
  off();
  return us;
}

/**
 * With STEPS_ALLOC_PROFILE=<file>, the window's sampled allocations, including those already
 * collected (young garbage is what a fan-out's scavenges pay for), as a `.heapprofile`.
 */
async function allocationWindow(): Promise<() => Promise<void>> {
  const file = process.env.STEPS_ALLOC_PROFILE;
  if (!file) return async () => undefined;
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  return async () => {
    const { profile } = await session.post("HeapProfiler.stopSampling");
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

/** The stage's request template input, as `deliveryBuilder` makes it from a stored run. */
function templateOf(run: RunRecord) {
  return runTaskRequestTemplate({
    stage: STAGE,
    urls: { publicUrl: "http://127.0.0.1:9", appUrl: "http://127.0.0.1:9", basePath: "/api/v2" },
    organizationName: run.organization,
    run: { id: run.id, createdAt: run.createdAt, createdBy: run.createdBy, message: run.message, isSpeculative: run.isSpeculative, planId: run.planId },
    configurationVersion: { id: run.configurationVersionId, downloadable: false },
    workspace: { id: "ws-fanout", name: "ws-fanout", workingDirectory: "" },
    vcs: run.vcs,
  });
}

/** The pure contract steps of one delivery, each alone. */
async function pureSteps(inst: Instance, out: Map<string, number>): Promise<{ text: string; headers: Record<string, string> }> {
  const [runId] = await createRuns(inst.runplane, "ws-fanout", 1);
  const run = (await inst.storage.runs.get(runId!))!;
  const template = templateOf(run);
  const fields = (i: number) => ({ accessToken: randomSecret(), taskResult: { id: `taskrs-${String(i).padStart(16, "0")}`, enforcementLevel: "mandatory" as const } });
  const sample = fields(0);
  const text = template(sample);
  const bytes = new TextEncoder().encode(text);
  out.set("access token (32 random bytes, base64url)", perCall(N, () => randomSecret()));
  out.set("its SHA-256 digest", perCall(N, () => sha256Hex(sample.accessToken)));
  out.set("ids (delivery, attempt record: 2 newId)", perCall(N, () => (newId("dlv"), newId("tda"))));
  out.set("payload template (per stage, / 10)", perCall(N / 10, () => templateOf(run)) / TASKS);
  out.set("payload text (spliced per result)", perCall(N, (i) => template({ ...sample, taskResult: { ...sample.taskResult, id: `taskrs-${i}` } })));
  out.set("seal (AES-256-GCM, D11)", perCall(N, (i) => inst.keyring.seal(text, deliveryPayloadBinding(`dlv-${i}`))));
  const fresh = createFreshPayloads({ now: Date.now });
  fresh.hold();
  out.set("fresh text kept and taken (instead of open)", perCall(N, (i) => (fresh.keep([{ id: `dlv-${i}`, text }]), fresh.take(`dlv-${i}`))));
  out.set("payload bytes (UTF-8 encode)", perCall(N, () => new TextEncoder().encode(text)));
  const headers = runTaskRequestHeaders({ bytes, key: inst.hmacKeys[0]!, dialect: "default", userAgent: "runplane" });
  out.set("sign (HMAC-SHA512, headers, D14)", perCall(N, () => runTaskRequestHeaders({ bytes, key: inst.hmacKeys[0]!, dialect: "default", userAgent: "runplane" })));
  return { text, headers };
}

/** Events, attempt telemetry and the attempt record of one delivery, each alone. */
function recordSteps(out: Map<string, number>): void {
  const logger = createConsoleLogger();
  const events = createRunTaskEmitter(logger);
  const watched = new Set(["run-a"]);
  events.on("result-status", (e) => void watched.has(e.runId));
  events.onOwn("stage-status", () => undefined);
  const emit = createStageEmitters({ logger } as ServiceContext, events);
  const at = new Date().toISOString();
  const before = { id: "taskrs-a", stageId: "ts-a", runId: "run-a", stage: STAGE, status: "pending", updatedAt: at } as const;
  const stage = { id: "ts-a", runId: "run-a", workspaceId: "ws-a", organization: "bench", stage: STAGE, status: "pending", statusTimestamps: {}, sequence: 1, overridden: false, overrideComment: null, version: 1, createdAt: at, updatedAt: at } as never;
  out.set("status events (result + stage / 10, D27)", perCall(N, () => emit.emitResult(before, { ...before, status: "running" })) + perCall(N / 10, () => emit.emitStage(stage, { ...(stage as object), status: "running" } as never)) / TASKS);
  const window = createAttemptWindow(300_000);
  const begin = createAttemptTelemetry(logger, (c, ok) => window.record(Date.now(), c, ok));
  const row = { id: "dlv-a", taskResultId: "taskrs-a", stageId: "ts-a", runId: "run-a", attempt: 0 } as TaskDeliveryRecord;
  out.set("attempt log, metrics, span, health window", perCall(N, () => begin(row).end("delivered", { status: 200, outcomeClass: "2xx" })));
  const attempt = { row, ready: true } as DeliveryAttempt;
  const observed = (): AttemptObservation => ({ startedAt: new Date(), durationMs: 1.2, outcome: "answered", status: 200, errorCode: null, detail: "responded with 200", response: { body: "", contentType: undefined, truncated: false } });
  out.set("attempt record (D31)", perCall(N, () => attemptRecord({ newId }, attempt, observed())));
  const result = { status: "pending" as const, statusTimestamps: { "pending-at": at }, deadlineAt: at, version: 2, updatedAt: at };
  out.set("pending -> running (stage machine)", perCall(N, () => transitionResult(result, { type: "deliver-ok" }, new Date())));
}

/** The memory adapter's work per delivery: the stage start's reads and write, the claim, the settle. */
async function storageSteps(inst: Instance, out: Map<string, number>): Promise<void> {
  const s = inst.storage;
  const ids = await createRuns(inst.runplane, "ws-fanout", RUNS);
  const reads: { run: RunRecord; stage: NonNullable<Awaited<ReturnType<typeof s.taskStages.getByRun>>>; results: Awaited<ReturnType<typeof s.taskResults.listByStage>> }[] = [];
  out.set("storage: start's reads (stage, run, workspace, results, tasks)", await perUnit(RUNS * TASKS, async () => {
    for (const id of ids) {
      const stage = (await s.taskStages.getByRun(id, STAGE))!;
      const run = (await s.runs.get(id))!;
      await s.workspaces.get(run.workspaceId);
      const results = await s.taskResults.listByStage(stage.id);
      for (const r of results) await s.runTasks.get(r.taskId);
      reads.push({ run, stage, results });
    }
  }));
  const now = new Date();
  const ctx = { newId, keyring: inst.keyring } as unknown as ServiceContext;
  const settings = resolveRunTaskSettings({ publicUrl: "http://127.0.0.1:9" });
  const starts = reads.map(({ run, stage, results }) => {
    const build = deliveryBuilder(ctx, settings, run, STAGE, { id: "ws-fanout", name: "ws-fanout", workingDirectory: "" }, now);
    const writes: GuardedResultWrite[] = results.map((r) => ({ next: { ...r, agentPoolId: null, accessTokenDigest: sha256Hex(randomSecret()), version: r.version + 1, updatedAt: now.toISOString() }, expected: { statuses: ["pending"], version: r.version } }));
    const t = transitionStage(stage, { type: "start" }, now);
    if (!t.ok) throw new Error("stage cannot start");
    return { next: advance(stage, t, now), expected: { statuses: ["pending" as const], version: stage.version }, writes, rows: writes.map((w) => build(w.next, "token").row) };
  });
  out.set("storage: stage start write (results, rows)", await perUnit(RUNS * TASKS, async () => {
    for (const st of starts) await s.taskStages.start(st.next, st.expected, st.writes, st.rows);
  }));
  const claimed: ClaimedDelivery[] = [];
  const window = { ms: 600_000, maxMs: null };
  out.set("storage: claim (batches of 128)", await perUnit(RUNS * TASKS, async () => {
    for (;;) {
      const got = await s.taskDeliveries.claim({ now: new Date().toISOString(), owner: "bench", leaseMs: 60_000, limit: 128, window });
      claimed.push(...got);
      if (got.length < 128) break;
    }
  }));
  const at = new Date().toISOString();
  const entries: DeliverySettlement[] = claimed.map((c) => ({
    id: c.row.id,
    fencingToken: c.row.fencingToken,
    type: "close",
    fields: { attempt: 1, closedAt: at, deliveredAt: at, lastError: null },
    result: { id: c.row.taskResultId, expected: { statuses: [c.result!.status], version: c.result!.version }, status: "running", statusTimestamps: { ...c.result!.statusTimestamps, "running-at": at }, version: c.result!.version + 1, updatedAt: at },
    record: attemptRecord({ newId }, { row: c.row, ready: true } as DeliveryAttempt, { startedAt: new Date(), durationMs: 1, outcome: "answered", status: 200, errorCode: null, detail: "responded with 200" }),
  }));
  out.set("storage: settle (batches of 32: close, attempt, advance)", await perUnit(entries.length, async () => {
    for (let i = 0; i < entries.length; i += 32) await s.taskDeliveries.settle(entries.slice(i, i + 32));
  }));
}

/** POSTs of one signed request to the receiver, 32 at a time: CPU us per POST, raw undici and through the egress. */
async function postSteps(url: string, sample: { text: string; headers: Record<string, string> }, out: Map<string, number>): Promise<void> {
  const body = new TextEncoder().encode(sample.text);
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  const egress = createEgress({ allow: ["127.0.0.1/32"], userAgent: "runplane" });
  const posts = 5_000;
  const run = async (send: () => Promise<void>): Promise<number> => {
    let left = posts;
    const lane = async (): Promise<void> => {
      while (left-- > 0) await send();
    };
    return perUnit(posts, async () => void (await Promise.all(Array.from({ length: 32 }, lane))));
  };
  const raw = async (): Promise<void> => {
    const res = await request(url, { dispatcher: agent, method: "POST", headers: sample.headers, body });
    await res.body.text();
  };
  const guarded = async (): Promise<void> => void (await egress.send({ url, headers: sample.headers, body }));
  await run(raw);
  out.set("undici POST (raw, 32 at a time)", await run(raw));
  await run(guarded);
  out.set("the same through runplane's guarded egress", await run(guarded));
  await agent.close();
  await egress.close();
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const receiver = await startServer("receiver", {}, new URL("./servers/receiver.ts", import.meta.url).pathname);
  const fan = await instance(receiver.url);
  const OK = { status: 200, headers: {}, body: "", bodyTruncated: false };
  const transport: HttpTransport = { send: async () => OK, close: async () => undefined };
  const dispatcher = createDispatcher(fan.runplane, { transport });
  dispatcher.start();
  const rounds: Map<string, number>[] = [];
  try {
    await fanOutTotal(fan.runplane); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      const out = new Map<string, number>();
      if (!TOTAL_ONLY) {
        const sample = await pureSteps(fan, out);
        recordSteps(out);
        await storageSteps(await instance(receiver.url), out);
        await postSteps(`${receiver.url}/ok/0`, sample, out);
      }
      out.set("TOTAL", await fanOutTotal(fan.runplane));
      rounds.push(out);
      process.stderr.write(`round ${r + 1}: total ${out.get("TOTAL")!.toFixed(1)} us\n`);
    }
  } finally {
    await dispatcher.stop({ graceMs: 1_000 });
    await fan.runplane.close();
    await receiver.stop();
  }
  report(rounds);
}

function report(rounds: Map<string, number>[]): void {
  const med = (k: string): number => median(rounds.map((m) => m.get(k)!));
  const totals = rounds.map((m) => m.get("TOTAL")!);
  const total = med("TOTAL");
  const posts = [...rounds[0]!.keys()].filter((k) => k.includes("POST") || k.includes("egress"));
  const steps = [...rounds[0]!.keys()].filter((k) => k !== "TOTAL" && !posts.includes(k));
  const row = (name: string, us: number, share = `${((us / total) * 100).toFixed(1)} %`): string => `| ${name} | ${us.toFixed(2)} | ${share} |`;
  console.log(`${rounds.length} rounds, ${RUNS} runs x ${TASKS} tasks per fan-out; medians; CPU us per delivery\n`);
  console.log("| step | us | share of total |\n|---|---|---|");
  let sum = 0;
  for (const k of steps) (sum += med(k)), console.log(row(k, med(k)));
  console.log(row("**sum of the steps**", sum));
  console.log(row(`**measured total, answered 200 in process** (rounds ${totals.map((t) => t.toFixed(0)).join(", ")})`, total, "100 %"));
  console.log(row("**remainder (overhead)**", total - sum));
  for (const k of posts) console.log(row(`(apart) ${k}`, med(k), "-"));
}

await main();
