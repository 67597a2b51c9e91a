/**
 * Shared set-up of the delivery tests (decisions D14-D16). Only 127.0.0.1 is ever contacted: the
 * transports allow exactly 127.0.0.1/32 and resolve no name (a forgotten resolver fails loudly).
 */
import { createKeyring, createDispatcher, createEgress, generateKey, type DispatcherOptions, type EgressOptions, type HttpRequest, type HttpResponse, type HttpTransport, type Keyring, type ResolvedAddress, type RunplaneOptions } from "../../src/index.js";
import type { RunStage } from "../../src/schemas/run-tasks.js";
import type { Storage } from "../../src/storage/types.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import type { ReceivedRequest, Reply, Script } from "../helpers/loopback-server.js";
import { attachTask, taskBody } from "../helpers/run-tasks.js";

export const START = Date.UTC(2026, 0, 1);
export const MINUTE = 60_000;

/** A clock that stands still until told to move, so due times can be checked to the millisecond. */
export interface ManualClock {
  (): Date;
  advance(ms: number): void;
  set(at: number): void;
  readonly ms: number;
}

export function manualClock(start = START): ManualClock {
  let t = start;
  const clock = (() => new Date(t)) as ManualClock;
  clock.advance = (ms) => {
    t += ms;
  };
  clock.set = (at) => {
    t = at;
  };
  Object.defineProperty(clock, "ms", { get: () => t });
  return clock;
}

/** Real DNS is off limits here. */
export const noRealDns = async (): Promise<ResolvedAddress[]> => {
  throw new Error("test forgot to inject a resolver");
};

/**
 * The real egress, allowed to reach 127.0.0.1 only, with a short attempt budget. The loopback
 * receiver stands in for a public integration, so its answers are kept whole (`excerpts: "full"`;
 * decision D38 keeps only the status line of an allowlisted destination's answer by default).
 */
export function loopbackEgress(options: EgressOptions = {}): HttpTransport {
  return createEgress({ allow: ["127.0.0.1/32"], timeoutMs: 300, resolve: noRealDns, excerpts: "full", ...options });
}

export interface DeliveryApp extends TestApp {
  clock: ManualClock;
  keyring: Keyring;
  /** Closes the runplane and the transport it was given. */
  close(): Promise<void>;
  /** A dispatcher over this app: fixed jitter (random 0) unless told otherwise. */
  dispatcher(options?: DispatcherOptions): ReturnType<typeof createDispatcher>;
}

/**
 * A test app (memory storage unless given) on a manual clock whose save-time policy and outbound
 * transport both allow 127.0.0.1 only.
 */
export async function deliveryApp(options: Partial<RunplaneOptions> & { storage?: Storage } = {}): Promise<DeliveryApp> {
  const clock = manualClock();
  const keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
  const transport = options.transport ?? loopbackEgress();
  const app = await createTestApp({
    keyring,
    clock,
    publicUrl: "https://runplane.example",
    egress: { allow: ["127.0.0.1/32"], resolve: noRealDns },
    ...options,
    transport,
  });
  const dispatcher = (more: DispatcherOptions = {}) => createDispatcher(app.runplane, { random: () => 0, owner: "test", ...more });
  const close = async () => {
    await app.runplane.close();
    await transport.close();
  };
  return Object.assign(app, { clock, keyring, dispatcher, close });
}

let names = 0;

/** Creates run tasks at `urls` over HTTP (each verified on creation), attaches them, creates a run and starts its stage. */
export async function startRun(
  a: DeliveryApp,
  urls: string[],
  options: { hmacKey?: string; level?: "advisory" | "mandatory"; stage?: RunStage; workspaceId?: string } = {},
): Promise<{ runId: string; stageId: string; resultIds: string[]; taskIds: string[] }> {
  const taskIds: string[] = [];
  for (const url of urls) {
    const res = await a.call("POST", "/api/v2/organizations/acme/tasks", {
      body: taskBody({ name: `task-${++names}`, url, ...(options.hmacKey === undefined ? {} : { "hmac-key": options.hmacKey }) }),
    });
    if (res.status !== 201) throw new Error(`task create failed: ${res.status} ${res.text}`);
    taskIds.push(res.json.data.id as string);
    await attachTask(a, res.json.data.id as string, options.level ?? "mandatory", [options.stage ?? "post_plan"], options.workspaceId);
  }
  const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId: options.workspaceId ?? "ws-a", configurationVersionId: "cv-1", message: "go" });
  const stage = stages.find((s) => s.stage === (options.stage ?? "post_plan"))!;
  await a.runplane.runTasks.startStage(run.id, stage.stage);
  const results = await a.runplane.runTasks.listResults(stage.id);
  return { runId: run.id, stageId: stage.id, resultIds: results.map((r) => r.id), taskIds };
}

/** The JSON body of a received request. */
export const bodyOf = (req: ReceivedRequest): Record<string, any> => JSON.parse(req.body.toString("utf8")) as Record<string, any>;

/** The verification request sent when a task is saved carries `access_token: "test-token"`. */
export const isVerification = (req: ReceivedRequest): boolean => bodyOf(req).access_token === "test-token";

/** Answers verification requests 200 and run task requests with `reply`. */
export const tasksAnswer = (reply: Reply | ((req: ReceivedRequest, index: number) => Reply)): Script => (req, index) =>
  isVerification(req) ? { kind: "respond", status: 200 } : typeof reply === "function" ? reply(req, index) : reply;

/** Run task requests only (not verification requests). */
export const deliveriesTo = (requests: readonly ReceivedRequest[]): ReceivedRequest[] => requests.filter((r) => !isVerification(r));

export const resultOf = async (a: TestApp, id: string) => (await a.storage.taskResults.get(id))!;
export const rowOf = async (a: TestApp, resultId: string) => (await a.storage.taskDeliveries.listByResult(resultId))[0]!;
export const iso = (ms: number): string => new Date(ms).toISOString();

/** A transport whose sends wait until the test settles them (or the dispatcher aborts them). */
export function heldTransport() {
  const waiting: { req: HttpRequest; settle(res: HttpResponse): void }[] = [];
  const transport: HttpTransport = {
    send: (req) =>
      new Promise<HttpResponse>((resolve, reject) => {
        waiting.push({ req, settle: resolve });
        req.signal?.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { name: "EgressError", code: "aborted" })));
      }),
    close: async () => {},
  };
  const answer = (status: number) => ({ status, headers: {}, body: "", bodyTruncated: false });
  return { transport, waiting, answer };
}

/** The `task_result_id` a run task request sent through a transport is for. */
export const resultIdOf = (req: HttpRequest): string =>
  JSON.parse(typeof req.body === "string" ? req.body : new TextDecoder().decode(req.body)).task_result_id as string;
