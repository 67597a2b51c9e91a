import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createDemoRuns } from "../../examples/server/demo-runs.js";
import { DEMO, seedDemo } from "../../examples/server/demo.js";
import { ensureDemoTasks } from "../../examples/server/integration.js";
import { createDispatcher, createRunplane, generateKey, silentLogger, type HttpRequest, type HttpResponse, type HttpTransport } from "../../src/index.js";

// `POST /demo/runs` answers early with the stage's state while its integration is
// failing, instead of waiting out a minute of retries and saying `timed_out`.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Answers the verification request 200 (so the demo tasks can be saved) and every run task request 401. */
const refusing: HttpTransport = {
  async send(req: HttpRequest): Promise<HttpResponse> {
    const body = typeof req.body === "string" ? req.body : new TextDecoder().decode(req.body);
    if (body.includes('"access_token":"test-token"')) return { status: 200, headers: {}, body: "", bodyTruncated: false };
    return { status: 401, headers: { "content-type": "text/plain" }, body: "Unauthorized:\n  no such key", bodyTruncated: false };
  },
  close: async () => undefined,
};

async function demoServer(transport: HttpTransport, timeoutMs = 60_000) {
  const storage = createMemoryStorage();
  const runplane = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k1", key: generateKey() }] }, transport });
  cleanups.push(() => runplane.close());
  const seed = await seedDemo(runplane);
  await ensureDemoTasks(runplane, { url: "https://integration.example/", hmacKey: "demo-runs-hmac-key", seed });
  const { token } = await runplane.directory.createApiToken({ organization: DEMO.organization, kind: "team", teamId: DEMO.ownersTeam });
  const dispatcher = createDispatcher(runplane, { pollIntervalMs: 50 });
  dispatcher.start();
  cleanups.push(() => dispatcher.stop({ graceMs: 0 }));
  // Longer than the test's own timeout: only the early answer can come back before the test ends.
  const demo = createDemoRuns(runplane, { publicUrl: "http://127.0.0.1:8080", timeoutMs });
  cleanups.push(() => demo.close());
  const post = () => demo.handler(new Request("http://127.0.0.1:8080/demo/runs", { method: "POST", headers: { authorization: `Bearer ${token}` } }));
  return { runplane, post, storage };
}

describe("POST /demo/runs with a failing integration", () => {
  it("answers 202 before its wait runs out, with the stage running, retrying, and what the integration last answered", { timeout: 30_000 }, async () => {
    const { runplane, post } = await demoServer(refusing);
    // No stopwatch: the wait (60 s) outlasts this test (30 s), so an answer at all is an early one,
    // and a wait that ran out would say `timed_out`, not `retrying`.
    const res = await post();
    expect(res.status).toBe(202);
    const body = (await res.json()) as Record<string, any>;
    expect(body).toStrictEqual({
      run_id: expect.stringMatching(/^run-/),
      message: "Triggered via the demo route",
      stages: { post_plan: "running", pre_apply: "pending" },
      retrying: true,
      last_answer: "401: Unauthorized: no such key",
      results_page: `http://127.0.0.1:8080/app/runs/${body.run_id}`,
    });
    // The run goes on: the result keeps being retried until its deadline.
    const stage = (await runplane.runTasks.listStages(body.run_id)).items.find((s) => s.stage === "post_plan");
    expect((await runplane.runTasks.listResults(stage!.id)).map((r) => r.status)).toEqual(["pending"]);
  });
});

// Found by an operator (issue 43): with a pool's only agent gone, /demo/runs waited its minute and
// said timed_out, not why. decision D34: it answers at once that the result waits for an agent.
describe("POST /demo/runs with an agent pool's task and no agent connected", () => {
  it("answers 202 at once, saying the result waits for an agent of the pool and that none has connected", { timeout: 30_000 }, async () => {
    const { post, storage } = await demoServer(refusing);
    // The demo's post-plan task, moved to the demo pool (whose agents have never connected).
    const task = await storage.runTasks.get("task-demo");
    const moved = await storage.runTasks.update({ ...task!, agentPoolId: DEMO.agentPool, version: task!.version + 1 }, task!.version);
    expect(moved.ok).toBe(true);
    const res = await post();
    expect(res.status).toBe(202);
    const body = (await res.json()) as Record<string, any>;
    expect(body).toMatchObject({ stages: { post_plan: "running" }, waiting_for_agent: 'waiting for an agent of pool "demo-pool": no agent of it is connected' });
  });
});

describe("POST /demo/runs, one after another", () => {
  it("leaves no listener behind on the server's shutdown signal (13 runs gave MaxListenersExceededWarning)", { timeout: 60_000 }, async () => {
    const { post } = await demoServer(refusing);
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(w.name);
    process.on("warning", onWarning);
    cleanups.push(() => void process.off("warning", onWarning));
    for (let i = 0; i < 13; i++) expect((await post()).status).toBe(202);
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });
});

/**
 * An integration that refuses the first run task request, then accepts each and calls back
 * `passed` on its own, as the example integration does once it is back.
 */
function recovering(runplane: () => ReturnType<typeof createRunplane>): HttpTransport {
  let refused = false;
  return {
    async send(req: HttpRequest): Promise<HttpResponse> {
      const body = JSON.parse(typeof req.body === "string" ? req.body : new TextDecoder().decode(req.body)) as Record<string, string>;
      if (body.access_token === "test-token") return { status: 200, headers: {}, body: "", bodyTruncated: false };
      if (!refused) {
        refused = true;
        return { status: 503, headers: {}, body: "starting", bodyTruncated: false };
      }
      const passed = { data: { type: "task-results", attributes: { status: "passed", message: "back" } } };
      setTimeout(() => void runplane().runTasks.callback(body.task_result_id!, body.access_token!, passed).catch(() => undefined), 10);
      return { status: 200, headers: {}, body: "", bodyTruncated: false };
    },
    close: async () => undefined,
  };
}

describe("POST /demo/runs whose integration recovers after the answer (D47)", () => {
  it("goes on with the run: each later stage starts, and the story ends instead of staying pending", { timeout: 30_000 }, async () => {
    let server: Awaited<ReturnType<typeof demoServer>> | undefined;
    server = await demoServer(recovering(() => server!.runplane));
    const res = await server.post();
    expect(res.status).toBe(202);
    const { run_id: runId } = (await res.json()) as { run_id: string };
    const { runplane } = server;
    // Bounded wait on events: both stages final (the retry comes about a second later).
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the run did not go on within 20 s")), 20_000);
      const check = async () => {
        const statuses = (await runplane.runTasks.listStages(runId)).items.map((s) => s.status);
        if (statuses.every((s) => s === "passed")) {
          clearTimeout(timer);
          off();
          resolve();
        }
      };
      const off = runplane.runTasks.on("stage-status", () => void check());
      void check();
    });
    expect((await runplane.runTasks.listStages(runId)).items.map((s) => `${s.stage}:${s.status}`)).toStrictEqual(["post_plan:passed", "pre_apply:passed"]);
  });
});
