import { metrics } from "@opentelemetry/api";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { installMetrics, mountObservability, serverLogger } from "../../examples/server/observability.js";
import { createDispatcher, type HttpRequest, type HttpResponse, type HttpTransport } from "../../src/index.js";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import type { Storage } from "../../src/storage/types.js";
import { createTestApp } from "../helpers/app.js";
import { gatedStorage } from "../helpers/gated-storage.js";
import { attachTask, createTask, fakeClock } from "../helpers/run-tasks.js";
import { manualClock, MINUTE } from "../delivery/support.js";

// The reference server exports runplane's metrics at GET /metrics (Prometheus text
// format) and answers GET /healthz.

let installed: Awaited<ReturnType<typeof installMetrics>> | undefined;
afterEach(async () => {
  metrics.disable();
  await installed?.shutdown();
});

async function server(options: { storageFails?: boolean; clock?: () => Date; storage?: Storage; transport?: HttpTransport } = {}) {
  installed = await installMetrics();
  const app = await createTestApp({
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.storage ? { storage: options.storage } : {}),
    ...(options.transport ? { transport: options.transport } : {}),
  });
  if (options.storageFails) app.storage.taskDeliveries.stats = async () => Promise.reject(new Error("connection refused"));
  const dispatcher = createDispatcher(app.runplane, { pollIntervalMs: 60_000 });
  const routes = new Hono();
  routes.all("/api/v2/*", (c) => app.runplane.handler(c.req.raw));
  mountObservability(routes, installed.scrape, app.runplane, dispatcher);
  return { app, dispatcher, routes };
}

describe("reference server observability", () => {
  it("exports request counts and outbox gauges at /metrics in the Prometheus text format", async () => {
    const { app, dispatcher, routes } = await server();
    dispatcher.start();
    await routes.request("/api/v2/organizations/acme/tasks", { headers: { authorization: `Bearer ${app.ownerToken}` } });
    const res = await routes.request("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toMatch(/^runplane_http_requests_total\{route="GET \/organizations\/:organization_name\/tasks",status="200"[^}]*\} 1$/m);
    expect(text).toMatch(/^runplane_outbox_due\{[^}]*\} 0$/m);
    expect(text).toMatch(/^runplane_outbox_oldest_due_age_seconds\{[^}]*\} 0$/m);
    // Buckets in seconds, not the SDK's millisecond defaults.
    expect(text).toMatch(/^runplane_http_duration_seconds_bucket\{[^}]*le="0.05"\} 1$/m);
    await dispatcher.stop({ graceMs: 0 });
  });

  // Prometheus names carry the unit once, and a stage of milliseconds is not measured as 0.
  it("exports every duration in seconds with the unit in its name once, and a stage of 36 ms as such", async () => {
    const clock = fakeClock();
    const { app, dispatcher, routes } = await server({ clock });
    await attachTask(app, await createTask(app, "lint"), "mandatory");
    const { run } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    await app.runplane.runTasks.startStage(run.id, "post_plan");
    await dispatcher.tick();
    clock.advance(36);
    await app.runplane.runTasks.cancelRun(run.id);
    const text = await (await routes.request("/metrics")).text();
    const histograms = [...text.matchAll(/^# TYPE (\S+) histogram$/gm)].map((m) => m[1]);
    expect(histograms.sort()).toEqual(["runplane_delivery_duration_seconds", "runplane_http_duration_seconds", "runplane_stage_duration_seconds"]);
    expect(text).not.toContain("_seconds_seconds");
    expect(text).toMatch(/^runplane_delivery_duration_seconds_count\{[^}]*outcome="delivered"[^}]*\} 1$/m);
    expect(text).toMatch(/^runplane_stage_duration_seconds_bucket\{[^}]*status="canceled"[^}]*le="1"\} 1$/m);
    const sum = /^runplane_stage_duration_seconds_sum\{[^}]*status="canceled"[^}]*\} (\S+)$/m.exec(text);
    expect(Number(sum?.[1])).toBeGreaterThanOrEqual(0.036);
  });

  it("answers /healthz 200 while the storage answers and the dispatcher runs, with the oldest due age", async () => {
    const { dispatcher, routes } = await server();
    dispatcher.start();
    const res = await routes.request("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, status: "ok", reasons: [], storage: "ok", dispatcher: "running", deliveries: "ok", oldestDueDeliveryAgeSeconds: 0 });
    await dispatcher.stop({ graceMs: 0 });
  });

  it("answers /healthz 503 when the dispatcher is not running", async () => {
    const { routes } = await server();
    const res = await routes.request("/healthz");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ok: false, status: "degraded", reasons: ["dispatcher stopped"], storage: "ok", dispatcher: "stopped" });
  });

  it("answers /healthz 503 when the storage cannot be read, without the error's text", async () => {
    const { dispatcher, routes } = await server({ storageFails: true });
    dispatcher.start();
    const res = await routes.request("/healthz");
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ ok: false, storage: "unreachable", dispatcher: "running", oldestDueDeliveryAgeSeconds: null });
    expect(text).not.toContain("refused");
    await dispatcher.stop({ graceMs: 0 });
  });

  // Decision D28: the database going away is `degraded` with the storage's reason, and back is ok.
  it("answers /healthz 503 degraded with the reason while the database cannot be reached, 200 once it is back", async () => {
    const gate = gatedStorage(createMemoryStorage());
    const { dispatcher, routes } = await server({ storage: gate.storage });
    dispatcher.start();
    gate.failFrom(0);
    const res = await routes.request("/healthz");
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      ok: false,
      status: "degraded",
      reasons: ["storage unreachable: connection refused"],
      storage: "unreachable",
      dispatcher: "running",
      deliveries: "ok",
      oldestDueDeliveryAgeSeconds: null,
    });
    gate.failFrom(null);
    expect((await routes.request("/healthz")).status).toBe(200);
    await dispatcher.stop({ graceMs: 0 });
  });
});

/** An integration that answers its verification 200 and every run task request 401, until told to accept. */
function refusingIntegration() {
  const state = { accepting: false };
  const transport: HttpTransport = {
    async send(req: HttpRequest): Promise<HttpResponse> {
      const body = typeof req.body === "string" ? req.body : new TextDecoder().decode(req.body);
      if (state.accepting || body.includes('"access_token":"test-token"')) return { status: 200, headers: {}, body: "", bodyTruncated: false };
      return { status: 401, headers: { "content-type": "text/plain" }, body: "no such key", bodyTruncated: false };
    },
    close: async () => undefined,
  };
  return { state, transport };
}

describe("reference server health while deliveries fail", () => {
  it("answers /healthz degraded with the reason while an integration refuses every request, still 200, and ok once its attempts succeed", async () => {
    const clock = manualClock();
    const integration = refusingIntegration();
    const { app, dispatcher, routes } = await server({ clock, transport: integration.transport });
    for (let i = 0; i < 5; i++) await attachTask(app, await createTask(app, `check${i}`), "mandatory");
    const { run } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    await app.runplane.runTasks.startStage(run.id, "post_plan");
    expect((await dispatcher.tick()).failed).toBe(5);
    dispatcher.start();
    const failing = await routes.request("/healthz");
    // The integration's fault, not this host's: a load balancer keeps routing to it.
    expect(failing.status).toBe(200);
    expect(await failing.json()).toMatchObject({
      ok: true,
      status: "degraded",
      reasons: ["deliveries failing: 5 of 5 attempts in the last 5m failed (4xx: 5)"],
      storage: "ok",
      dispatcher: "running",
      deliveries: "failing",
    });
    const metricsText = await (await routes.request("/metrics")).text();
    expect(metricsText).toMatch(/^runplane_delivery_attempts_total\{[^}]*class="4xx"[^}]*\} 5$/m);
    expect(metricsText).toMatch(/^runplane_deliveries_retrying\{[^}]*\} 5$/m);
    clock.advance(6 * MINUTE);
    expect((await (await routes.request("/healthz")).json()).reasons).toEqual(["deliveries retrying: 5 results retrying, the oldest for 6m (longer than 5m)"]);
    integration.state.accepting = true;
    expect((await dispatcher.tick()).delivered).toBe(5);
    const healthy = await routes.request("/healthz");
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toMatchObject({ ok: true, status: "ok", reasons: [], deliveries: "ok" });
    await dispatcher.stop({ graceMs: 0 });
  });
});

describe("reference server logger", () => {
  it("takes its level from LOG_LEVEL, info by default, and refuses an unknown one", () => {
    expect(() => serverLogger("verbose")).toThrow(/LOG_LEVEL/);
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((line: string) => (written.push(line), true)) as typeof process.stderr.write;
    try {
      serverLogger().info("shown");
      serverLogger().debug("hidden");
      serverLogger("error").warn("hidden too");
    } finally {
      process.stderr.write = write;
    }
    expect(written.map((l) => JSON.parse(l).message)).toEqual(["shown"]);
  });
});
