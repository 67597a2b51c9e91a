import { Writable } from "node:stream";
import pino from "pino";
import type { Histogram } from "@opentelemetry/sdk-metrics";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { HttpTransport } from "../../src/index.js";
import { createConsoleLogger } from "../../src/index.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { installOtel, type Otel } from "../helpers/otel.js";
import { callbackBody, sendCallback, tokenOf } from "../helpers/run-tasks.js";
import { bodyOf, deliveriesTo, deliveryApp, MINUTE, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// Every delivery attempt is a log event, a count by outcome, a latency sample and a span.
// The first request each task gets is its verification on creation (answered 200 here).

let receiver: LoopbackServer;
let a: DeliveryApp;
let otel: Otel;
let lines: Record<string, any>[];
beforeEach(() => {
  otel = installOtel();
  lines = [];
});
afterEach(async () => {
  await a?.close();
  await receiver?.close();
  await otel.uninstall();
});

const logger = () => createConsoleLogger({ level: "debug", write: (line) => void lines.push(JSON.parse(line)) });
const events = (name: string) => lines.filter((l) => l.event === name);

describe("delivery telemetry", () => {
  it("logs a 503 as a warning with the attempt, status, duration and next attempt, then the 200 as info", async () => {
    receiver = await startLoopbackServer(tasksAnswer((_req, i) => ({ kind: "respond", status: i === 1 ? 503 : 200 })));
    a = await deliveryApp({ logger: logger() });
    const { resultIds, stageId, runId } = await startRun(a, [receiver.url("/hook")]);
    await a.dispatcher().tick();
    const [retry] = events("delivery.retry");
    expect(retry).toMatchObject({ level: "warn", taskResultId: resultIds[0], stageId, runId, attempt: 1, status: 503, error: "responded with 503" });
    expect(typeof retry!.durationMs).toBe("number");
    expect(Date.parse(retry!.nextAttemptAt)).toBeGreaterThan(a.clock.ms);
    a.clock.advance(MINUTE);
    await a.dispatcher().tick();
    expect(events("delivery.delivered")).toEqual([expect.objectContaining({ level: "info", attempt: 2, status: 200 })]);
  });

  it("hands the same events to a pino logger given as it is, fields first", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    const stream = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(JSON.parse(chunk.toString())), done()) });
    a = await deliveryApp({ logger: pino({ level: "info" }, stream) });
    const { resultIds } = await startRun(a, [receiver.url("/hook")]);
    await a.dispatcher().tick();
    expect(events("delivery.delivered")).toEqual([
      expect.objectContaining({ level: 30, msg: "run task delivery delivered", taskResultId: resultIds[0], attempt: 1, status: 200 }),
    ]);
  });

  it("never logs the access token, the task URL or the payload", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 503 }));
    a = await deliveryApp({ logger: logger() });
    await startRun(a, [receiver.url("/secret-path")]);
    await a.dispatcher().tick();
    const token = bodyOf(deliveriesTo(receiver.requests)[0]!).access_token as string;
    const text = JSON.stringify(lines);
    expect(text).not.toContain(token);
    expect(text).not.toContain("secret-path");
  });

  it("counts attempts by outcome, samples their latency and traces each one", async () => {
    receiver = await startLoopbackServer(tasksAnswer((_req, i) => ({ kind: "respond", status: i === 1 ? 503 : 200 })));
    a = await deliveryApp({ logger: logger() });
    await startRun(a, [receiver.url("/hook")]);
    await a.dispatcher().tick();
    a.clock.advance(MINUTE);
    await a.dispatcher().tick();
    expect(await otel.count("runplane.deliveries", { outcome: "retry" })).toBe(1);
    expect(await otel.count("runplane.deliveries", { outcome: "delivered" })).toBe(1);
    expect(await otel.count("runplane.delivery.duration_seconds")).toBe(2);
    const spans = otel.spans().filter((s) => s.name === "runplane.delivery.attempt");
    expect(spans.map((s) => [s.attributes["runplane.delivery.attempt"], s.attributes["http.response.status_code"], s.status.code])).toEqual([
      [1, 503, 2],
      [2, 200, 0],
    ]);
  });
});

describe("stage and deadline telemetry", () => {
  it("logs each stage and result change, the deadline, and measures the stage by its final status", async () => {
    receiver = await startLoopbackServer(tasksAnswer((_req, i) => ({ kind: "respond", status: i === 0 ? 200 : 503 })));
    a = await deliveryApp({ logger: logger() });
    const { resultIds, stageId } = await startRun(a, [receiver.url("/hook")]);
    expect(events("stage.status")).toEqual([expect.objectContaining({ level: "info", stageId, from: "pending", to: "running" })]);
    await a.dispatcher().tick();
    a.clock.advance(11 * MINUTE);
    await a.dispatcher().tick();
    expect(events("deadline.expired")).toEqual([expect.objectContaining({ level: "warn", taskResultId: resultIds[0], stageId, to: "unreachable" })]);
    expect(events("result.status")).toContainEqual(expect.objectContaining({ taskResultId: resultIds[0], from: "pending", to: "unreachable" }));
    const final = events("stage.status").at(-1)!;
    expect(final).toMatchObject({ level: "warn", from: "running", to: "unreachable" });
    expect(final.durationMs).toBe(11 * MINUTE);
    const [point] = await otel.points("runplane.stage.duration_seconds");
    expect(point?.attributes).toEqual({ status: "unreachable", stage: "post_plan" });
  });

  // The measurement keeps milliseconds, and so do the status timestamps (D36).
  it("measures a stage that took 36 ms to the millisecond, and its status timestamps show the same 36 ms", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await deliveryApp({ logger: logger() });
    const { resultIds, stageId } = await startRun(a, [receiver.url("/hook")]);
    await a.dispatcher().tick();
    a.clock.advance(36);
    expect((await sendCallback(a, resultIds[0]!, await tokenOf(a, resultIds[0]!), callbackBody("passed"))).status).toBe(200);
    expect(events("stage.status").at(-1)).toMatchObject({ stageId, from: "running", to: "passed", durationMs: 36 });
    const [point] = await otel.points("runplane.stage.duration_seconds");
    expect(point?.attributes).toEqual({ status: "passed", stage: "post_plan" });
    expect((point?.value as Histogram).sum).toBe(0.036);
    const stage = await a.runplane.runTasks.getStageById(stageId);
    expect(stage?.statusTimestamps).toEqual({ "running-at": "2026-01-01T00:00:00.000+00:00", "passed-at": "2026-01-01T00:00:00.036+00:00" });
  });
});

describe("outbox gauges", () => {
  // Sends that never answer (until the dispatcher aborts them at stop) keep the rows leased.
  const hanging: HttpTransport = {
    send: (req) => new Promise((_resolve, reject) => req.signal?.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { name: "EgressError" })))),
    close: async () => {},
  };
  const gauge = async (name: string) => (await otel.points(name)).map((p) => p.value);

  it("reports due and leased rows and the oldest due row's age while a dispatcher runs", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await deliveryApp({ logger: logger() });
    await startRun(a, [receiver.url("/1"), receiver.url("/2")]);
    const dispatcher = a.dispatcher({ transport: hanging, pollIntervalMs: 60_000 });
    expect(await gauge("runplane.outbox.due")).toEqual([]);
    dispatcher.start();
    await vi.waitFor(async () => expect(await gauge("runplane.outbox.leased")).toEqual([2]), { timeout: 2_000, interval: 5 });
    expect(await gauge("runplane.outbox.due")).toEqual([0]);
    expect(await gauge("runplane.outbox.oldest_due_age_seconds")).toEqual([0]);
    // The manual clock moves past the 30 s leases: both rows count as due again, due for 31 s.
    a.clock.advance(31_000);
    expect(await gauge("runplane.outbox.due")).toEqual([2]);
    expect(await gauge("runplane.outbox.leased")).toEqual([0]);
    expect(await gauge("runplane.outbox.oldest_due_age_seconds")).toEqual([31]);
    expect(dispatcher.isRunning()).toBe(true);
    await dispatcher.stop({ graceMs: 0 });
    expect(dispatcher.isRunning()).toBe(false);
  });

  it("stops reading the outbox when its dispatcher stops, however many came and went", async () => {
    a = await deliveryApp({ logger: logger() });
    const outbox = vi.spyOn(a.runplane.runTasks.deliveries, "outbox");
    for (let i = 0; i < 3; i++) {
      const dispatcher = a.dispatcher({ pollIntervalMs: 60_000 });
      dispatcher.start();
      await dispatcher.stop();
    }
    const running = a.dispatcher({ pollIntervalMs: 60_000 });
    running.start();
    expect(await gauge("runplane.outbox.due")).toEqual([0]);
    expect(outbox).toHaveBeenCalledTimes(1);
    await running.stop();
    outbox.mockClear();
    await otel.points("runplane.outbox.due");
    expect(outbox).not.toHaveBeenCalled();
  });
});
