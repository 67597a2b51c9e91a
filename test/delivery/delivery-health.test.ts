import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { startLoopbackServer, type LoopbackServer, type Reply } from "../helpers/loopback-server.js";
import { installOtel, type Otel } from "../helpers/otel.js";
import { deliveryApp, MINUTE, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// `health()` says `degraded` while deliveries are failing: half or more of at least
// 5 attempts of the last 5 minutes (this process's, counted in memory), or a result retrying for
// longer than 5 minutes (the storage's outbox, whichever host made the attempts). Metrics: attempts
// by outcome class and the results retrying now.

let receiver: LoopbackServer;
let a: DeliveryApp;
let otel: Otel;
beforeEach(() => {
  otel = installOtel();
});
afterEach(async () => {
  await a?.close();
  await receiver?.close();
  await otel.uninstall();
});

const refusing: Reply = { kind: "respond", status: 401, headers: { "content-type": "text/plain" }, body: "no such key" };
const urls = (n: number) => Array.from({ length: n }, (_, i) => receiver.url(`/hook/${i}`));

describe("runplane.health() while deliveries fail", () => {
  it("is degraded while half or more of at least 5 attempts of the last 5 minutes failed, naming their kinds, and ok once they are past", async () => {
    receiver = await startLoopbackServer(tasksAnswer(refusing));
    a = await deliveryApp();
    await startRun(a, urls(5));
    expect(await a.runplane.health()).toEqual({ status: "ok", reasons: [], storage: "ok", deliveries: "ok" });
    await a.dispatcher().tick();
    expect(await a.runplane.health()).toEqual({
      status: "degraded",
      reasons: ["deliveries failing: 5 of 5 attempts in the last 5m failed (4xx: 5)"],
      storage: "ok",
      deliveries: "failing",
    });
    // The integration is fixed: the retries succeed, but half of the window's attempts failed.
    receiver.setScript(tasksAnswer({ kind: "respond", status: 200 }));
    a.clock.advance(MINUTE);
    expect((await a.dispatcher().tick()).delivered).toBe(5);
    expect((await a.runplane.health()).reasons).toEqual(["deliveries failing: 5 of 10 attempts in the last 5m failed (4xx: 5)"]);
    a.clock.advance(4 * MINUTE + 1_000);
    expect(await a.runplane.health()).toEqual({ status: "ok", reasons: [], storage: "ok", deliveries: "ok" });
  });

  it("does not judge fewer than 5 attempts, and names each kind of failure", async () => {
    receiver = await startLoopbackServer(tasksAnswer((req) => (req.path.endsWith("/0") ? { kind: "respond", status: 503 } : req.path.endsWith("/1") ? { kind: "reset" } : refusing)));
    a = await deliveryApp();
    await startRun(a, urls(4));
    await a.dispatcher().tick();
    expect((await a.runplane.health()).status).toBe("ok");
    a.clock.advance(MINUTE);
    await a.dispatcher().tick();
    expect((await a.runplane.health()).reasons).toEqual(["deliveries failing: 8 of 8 attempts in the last 5m failed (4xx: 4, 5xx: 2, network: 2)"]);
  });

  it("is degraded while a result has been retrying for longer than 5 minutes, on every host of the storage", async () => {
    receiver = await startLoopbackServer(tasksAnswer(refusing));
    a = await deliveryApp();
    await startRun(a, urls(1));
    await a.dispatcher().tick();
    a.clock.advance(5 * MINUTE);
    expect((await a.runplane.health()).status).toBe("ok");
    a.clock.advance(61_000);
    const reason = "deliveries retrying: 1 result has been retrying for 6m1s (longer than 5m)";
    expect(await a.runplane.health()).toEqual({ status: "degraded", reasons: [reason], storage: "ok", deliveries: "failing" });
    // Another host on the same storage made no attempt, and says the same.
    const other = createRunplane({ storage: a.storage, logger: silentLogger, clock: a.clock, keyring: { keys: [{ id: "k1", key: generateKey() }] } });
    expect((await other.health()).reasons).toEqual([reason]);
  });

  it("takes its window, share, minimum and retrying time from the health option", async () => {
    receiver = await startLoopbackServer(tasksAnswer((req) => (req.path.endsWith("/0") ? refusing : { kind: "respond", status: 200 })));
    a = await deliveryApp({ health: { window: "1m", failureShare: 0.25, minAttempts: 4, retryingFor: "90s" } });
    await startRun(a, urls(4));
    await a.dispatcher().tick();
    expect((await a.runplane.health()).reasons).toEqual(["deliveries failing: 1 of 4 attempts in the last 1m failed (4xx: 1)"]);
    a.clock.advance(91_000);
    expect((await a.runplane.health()).reasons).toEqual(["deliveries retrying: 1 result has been retrying for 1m31s (longer than 1m30s)"]);
  });
});

describe("delivery metrics", () => {
  it("counts attempts by outcome class and reports the results retrying while a dispatcher runs", async () => {
    const script = (req: { path: string }): Reply =>
      req.path.endsWith("/0") ? refusing : req.path.endsWith("/1") ? { kind: "respond", status: 500 } : req.path.endsWith("/2") ? { kind: "hang" } : { kind: "respond", status: 200 };
    receiver = await startLoopbackServer(tasksAnswer(script));
    a = await deliveryApp();
    await startRun(a, urls(4));
    await a.dispatcher().tick();
    expect(await otel.count("runplane.delivery.attempts", { class: "4xx" })).toBe(1);
    expect(await otel.count("runplane.delivery.attempts", { class: "5xx" })).toBe(1);
    expect(await otel.count("runplane.delivery.attempts", { class: "timeout" })).toBe(1);
    expect(await otel.count("runplane.delivery.attempts", { class: "2xx" })).toBe(1);
    expect(await otel.count("runplane.delivery.attempts")).toBe(4);
    // The gauge is read from the storage when collected: no window to wait out.
    expect(await otel.points("runplane.deliveries.retrying")).toEqual([]);
    const dispatcher = a.dispatcher({ pollIntervalMs: 60_000 });
    dispatcher.start();
    expect((await otel.points("runplane.deliveries.retrying")).map((p) => p.value)).toEqual([3]);
    await dispatcher.stop({ graceMs: 0 });
  });
});
