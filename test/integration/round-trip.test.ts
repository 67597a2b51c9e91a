import { describe, expect, it, vi } from "vitest";
import { createDispatcher, type HttpTransport } from "../../src/index.js";
import { createCallbackClient, createRunTaskHandler, type RunTaskRequest } from "../../src/integration/index.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { attachTask, taskBody } from "../helpers/run-tasks.js";

/**
 * The integration kit against runplane itself, no network: the transport hands runplane's real
 * outbound requests (verification and dispatcher deliveries, D14) to a `createRunTaskHandler`, and
 * the kit's callback client PATCHes through `runplane.handler` (D17).
 */
const KEY = "round-trip-secret";

function handlerTransport(handler: (request: Request) => Promise<Response>, seen: Request[]): HttpTransport {
  return {
    async send(req) {
      const request = new Request(req.url, { method: "POST", headers: req.headers, body: req.body as BodyInit });
      seen.push(request.clone());
      const res = await handler(request);
      return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text(), bodyTruncated: false };
    },
    close: async () => undefined,
  };
}

async function setUp(dialect: "default" | "hcp-terraform", integrationKey: string) {
  const received: RunTaskRequest[] = [];
  const seen: Request[] = [];
  let app: TestApp | null = null;
  const callbacks = createCallbackClient({ fetch: (url, init) => app!.runplane.handler(new Request(url, init)) });
  const handler = createRunTaskHandler({
    hmacKey: integrationKey,
    onRequest: async (request) => {
      received.push(request);
      await callbacks.send(request, {
        status: "running",
        outcomes: [{ outcomeId: "RT-1", description: "checked", tags: { Severity: [{ label: "High", level: "error" }] } }],
      });
      await callbacks.send(request, { status: "failed", message: "found a problem" });
    },
  });
  app = await createTestApp({ dialect, publicUrl: "https://runplane.example", transport: handlerTransport(handler, seen) });
  return { app, received, seen };
}

describe("integration kit round trip with runplane", () => {
  it.each(["default", "hcp-terraform"] as const)("verifies, delivers, calls back and reads outcomes (%s dialect)", async (dialect) => {
    const { app, received, seen } = await setUp(dialect, KEY);
    // Saving the task sends the verification request; the kit verifies its signature and answers 200.
    const created = await app.call("POST", "/api/v2/organizations/acme/tasks", {
      body: taskBody({ name: "kit", url: "https://kit.example/run-task", "hmac-key": KEY }),
    });
    expect(created.status).toBe(201);
    expect(seen).toHaveLength(1);
    const header = dialect === "hcp-terraform" ? "x-tfc-task-signature" : "x-svc-task-signature";
    expect(seen[0]!.headers.get(header)).toMatch(/^[0-9a-f]{128}$/);

    await attachTask(app, created.json.data.id, "mandatory");
    const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    await app.runplane.runTasks.startStage(run.id, stages[0]!.stage);
    expect(await createDispatcher(app.runplane).tick()).toMatchObject({ attempted: 1, delivered: 1 });

    await vi.waitFor(async () => expect((await app.runplane.runTasks.getStage(run.id, "post_plan"))!.status).toBe("failed"));
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ run_id: run.id, stage: "post_plan", run_message: "go", task_result_enforcement_level: "mandatory" });

    const [result] = await app.runplane.runTasks.listResults(stages[0]!.id);
    expect(result).toMatchObject({ status: "failed", message: "found a problem" });
    const outcomes = await app.call("GET", `/api/v2/task-results/${result!.id}/outcomes`);
    expect(outcomes.status).toBe(200);
    expect(outcomes.json.data).toHaveLength(1);
    expect(outcomes.json.data[0].attributes).toMatchObject({
      "outcome-id": "RT-1",
      tags: [{ label: "Severity", value: [{ label: "High", level: "error" }] }],
    });
  });

  it("a kit holding another key refuses the verification request, so the task is not saved", async () => {
    const { app, received } = await setUp("default", "some-other-key");
    const created = await app.call("POST", "/api/v2/organizations/acme/tasks", {
      body: taskBody({ name: "kit", url: "https://kit.example/run-task", "hmac-key": KEY }),
    });
    expect(created.status).toBe(422);
    expect(received).toEqual([]);
  });
});
