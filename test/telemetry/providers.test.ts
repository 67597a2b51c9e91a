import { vi } from "vitest";
import { afterEach, describe, expect, it } from "vitest";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { createOtel, installOtel, type Otel } from "../helpers/otel.js";
import { callbackBody, sendCallback, tokenOf } from "../helpers/run-tasks.js";
import { deliveryApp, startRun, tasksAnswer, type DeliveryApp } from "../delivery/support.js";

// decision D50: runplane's metrics reach the host's MeterProvider whether it is registered before
// or after createRunplane (OpenTelemetry's global meter provider is no proxy: instruments taken
// before registration stay no-ops), or given as the `meterProvider` option.

let receiver: LoopbackServer | undefined;
let a: DeliveryApp | undefined;
const otels: Otel[] = [];
afterEach(async () => {
  await a?.close();
  await receiver?.close();
  a = undefined;
  receiver = undefined;
  for (const otel of otels.splice(0)) await otel.uninstall();
});

/** A run through one task, its delivery, its callback and an API read: every kind of metric once. */
async function exercise(app: DeliveryApp): Promise<void> {
  const { resultIds } = await startRun(app, [receiver!.url("/hook")]);
  await app.dispatcher().tick();
  expect((await sendCallback(app, resultIds[0]!, await tokenOf(app, resultIds[0]!), callbackBody("passed"))).status).toBe(200);
  expect((await app.call("GET", "/api/v2/organizations/acme/tasks")).status).toBe(200);
}

/** What `exercise` leaves in a provider. */
async function seen(otel: Otel) {
  return {
    requests: await otel.count("runplane.http.requests", { route: "GET /organizations/:organization_name/tasks" }),
    callbacks: await otel.count("runplane.callbacks", { status: 200 }),
    stages: await otel.count("runplane.stage.duration_seconds", { status: "passed" }),
    deliveries: await otel.count("runplane.deliveries", { outcome: "delivered" }),
    requestSpans: otel.spans().filter((s) => s.name.startsWith("runplane.http.request")).length > 0,
    attemptSpans: otel.spans().filter((s) => s.name === "runplane.delivery.attempt").length,
  };
}
const EVERYTHING = { requests: 1, callbacks: 1, stages: 1, deliveries: 1, requestSpans: true, attemptSpans: 1 };

describe("telemetry providers (D50)", () => {
  it("a MeterProvider registered before createRunplane gets every metric", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    const otel = installOtel();
    otels.push(otel);
    a = await deliveryApp();
    await exercise(a);
    expect(await seen(otel)).toEqual(EVERYTHING);
  });

  it("a MeterProvider registered after createRunplane gets every metric too, not only the dispatcher's", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await deliveryApp();
    const otel = installOtel();
    otels.push(otel);
    await exercise(a);
    expect(await seen(otel)).toEqual(EVERYTHING);
  });

  it("a provider registered while a dispatcher runs gets the outbox gauges within a few seconds", async () => {
    a = await deliveryApp();
    const dispatcher = a.dispatcher({ pollIntervalMs: 60_000 });
    dispatcher.start();
    const otel = installOtel();
    otels.push(otel);
    await vi.waitFor(async () => expect((await otel.points("runplane.outbox.due")).map((p) => p.value)).toEqual([0]), { timeout: 4_000, interval: 50 });
    await dispatcher.stop();
  });

  it("the meterProvider and tracerProvider options get every metric and span, and the global providers none", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    const global = installOtel();
    const own = createOtel();
    otels.push(global, own);
    a = await deliveryApp({ meterProvider: own.meterProvider, tracerProvider: own.tracerProvider });
    const dispatcher = a.dispatcher({ pollIntervalMs: 60_000 });
    dispatcher.start();
    await exercise(a);
    await dispatcher.stop();
    expect(await seen(own)).toEqual(EVERYTHING);
    expect(await own.points("runplane.outbox.due")).toHaveLength(0); // stopped: no longer observed
    expect(await seen(global)).toEqual({ requests: 0, callbacks: 0, stages: 0, deliveries: 0, requestSpans: false, attemptSpans: 0 });
  });
});
