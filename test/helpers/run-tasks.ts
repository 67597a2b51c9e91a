import { createDispatcher, createKeyring, generateKey, type HttpTransport, type Keyring, type TickReport } from "../../src/index.js";
import type { RunStage } from "../../src/schemas/run-tasks.js";
import { deliveryPayloadBinding } from "../../src/services/task-stages.js";
import type { Storage } from "../../src/storage/types.js";
import { createTestApp, type TestApp, type TestResponse } from "./app.js";
import type { StorageSetup } from "./storages.js";

/** A clock that ticks 1 ms per reading (total creation order) and jumps when told to. */
export interface FakeClock {
  (): Date;
  advance(ms: number): void;
}

export function fakeClock(start = Date.UTC(2026, 0, 1)): FakeClock {
  let t = start;
  const clock = (() => new Date(t++)) as FakeClock;
  clock.advance = (ms: number) => {
    t += ms;
  };
  return clock;
}

export interface RunTaskApp extends TestApp {
  keyring: Keyring;
  clock: FakeClock;
}

/** A test app whose keyring and clock the test holds, over a fresh storage of `setup`. */
export async function runTaskApp(
  setup: StorageSetup,
  onDispose: (dispose: () => void) => void,
  options: Parameters<typeof createTestApp>[0] = {},
): Promise<RunTaskApp> {
  const s = setup.create();
  onDispose(s.dispose);
  const keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
  const clock = fakeClock();
  const app = await createTestApp({ keyring, clock, publicUrl: "https://runplane.example", ...options, storage: s.storage });
  return Object.assign(app, { keyring, clock });
}

export const taskBody = (attributes: Record<string, unknown>) => ({ data: { type: "tasks", attributes } });

export const workspaceTaskBody = (taskId: string, attributes: Record<string, unknown>) => ({
  data: { type: "workspace-tasks", attributes, relationships: { task: { data: { type: "tasks", id: taskId } } } },
});

/** Creates an organization run task over HTTP and resolves its id. */
export async function createTask(a: TestApp, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await a.call("POST", "/api/v2/organizations/acme/tasks", {
    body: taskBody({ name, url: `https://${name}.example/hook`, ...extra }),
  });
  if (res.status !== 201) throw new Error(`task create failed: ${res.status} ${res.text}`);
  return res.json.data.id as string;
}

/** Attaches a task to a workspace over HTTP and resolves the workspace task id. */
export async function attachTask(
  a: TestApp,
  taskId: string,
  level: "advisory" | "mandatory",
  stages: RunStage[] = ["post_plan"],
  workspaceId = "ws-a",
): Promise<string> {
  const res = await a.call("POST", `/api/v2/workspaces/${workspaceId}/tasks`, {
    body: workspaceTaskBody(taskId, { "enforcement-level": level, stages }),
  });
  if (res.status !== 201) throw new Error(`workspace task create failed: ${res.status} ${res.text}`);
  return res.json.data.id as string;
}

/**
 * The request payload the dispatcher will send for a result, opened from its sealed outbox row the
 * way the dispatcher does it. Its `access_token` is the callback token.
 */
export async function payloadOf(storage: Storage, keyring: Keyring, resultId: string): Promise<Record<string, any>> {
  const [row] = await storage.taskDeliveries.listByResult(resultId);
  if (!row) throw new Error(`no delivery for ${resultId}`);
  return JSON.parse(keyring.open(row.payload, deliveryPayloadBinding(row.id))) as Record<string, any>;
}

export async function tokenOf(a: RunTaskApp, resultId: string): Promise<string> {
  return (await payloadOf(a.storage, a.keyring, resultId)).access_token as string;
}

export const callbackBody = (status: string, attributes: Record<string, unknown> = {}, outcomes?: unknown[]) => ({
  data: {
    type: "task-results",
    attributes: { status, ...attributes },
    ...(outcomes === undefined ? {} : { relationships: { outcomes: { data: outcomes } } }),
  },
});

export const outcomeItem = (outcomeId: string, attributes: Record<string, unknown> = {}) => ({
  type: "task-result-outcomes",
  attributes: { "outcome-id": outcomeId, description: `finding ${outcomeId}`, ...attributes },
});

export function sendCallback(a: TestApp, resultId: string, token: string | null, body: unknown): Promise<TestResponse> {
  return a.call("PATCH", `/api/v2/task-results/${resultId}/callback`, { token, body });
}

/** A workspace `ws-a` with the given tasks on post_plan, a created run and its started stage. */
export async function startedRun(
  a: RunTaskApp,
  levels: ("advisory" | "mandatory")[],
): Promise<{ runId: string; stageId: string; resultIds: string[] }> {
  for (const [i, level] of levels.entries()) await attachTask(a, await createTask(a, `task${i}`), level);
  const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
  const stage = stages[0]!;
  await a.runplane.runTasks.startStage(run.id, stage.stage);
  const results = await a.runplane.runTasks.listResults(stage.id);
  return { runId: run.id, stageId: stage.id, resultIds: results.map((r) => r.id) };
}

/**
 * Sends every due run task request once through the app's transport (the test apps answer 200)
 * and sweeps. The first attempt is what opens a result's callback deadline (D16).
 */
export function deliverDue(a: RunTaskApp): Promise<TickReport> {
  return createDispatcher(a.runplane).tick();
}

/**
 * An integration that answers every run task request `status` and the verification request of a
 * task's create or update (its `access_token` is `test-token`) 200, so tasks save and deliveries retry.
 */
export function answeringRunTasks(status: number): HttpTransport {
  return {
    async send(req) {
      const body = typeof req.body === "string" ? req.body : new TextDecoder().decode(req.body);
      const token = (JSON.parse(body) as { access_token?: string }).access_token;
      return { status: token === "test-token" ? 200 : status, headers: {}, body: "", bodyTruncated: false };
    },
    async close() {},
  };
}
