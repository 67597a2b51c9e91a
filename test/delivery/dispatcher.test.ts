import { afterEach, describe, expect, it, vi } from "vitest";
import { createDispatcher, createKeyring, createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { KEY_WAIT_MS } from "../../src/services/delivery-settlement.js";
import { firstPassOver } from "../helpers/dispatcher-passes.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { deliveriesTo, deliveryApp, heldTransport, iso, loopbackEgress, resultOf, rowOf, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// The dispatcher's lifecycle (decision D15): background polling, graceful stop that leaves no
// lease held, takeover of a dead dispatcher's rows after its lease, and fencing of its late writes.

let receiver: LoopbackServer;
let a: DeliveryApp;
afterEach(async () => {
  await a?.close();
  await receiver?.close();
});

describe("dispatcher: background loop", () => {
  it("delivers due rows once started and stops leaving no lease held", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200, delayMs: 20 }));
    a = await deliveryApp();
    const { resultIds } = await startRun(a, [receiver.url("/1"), receiver.url("/2"), receiver.url("/3")]);
    const dispatcher = a.dispatcher({ pollIntervalMs: 5 });
    dispatcher.start();
    dispatcher.start();
    await vi.waitFor(async () => {
      for (const id of resultIds) expect((await resultOf(a, id)).status).toBe("running");
    }, { timeout: 2_000, interval: 5 });
    await dispatcher.stop();
    expect(() => dispatcher.start()).toThrow(/stopped/);
    expect(deliveriesTo(receiver.requests)).toHaveLength(3);
    for (const id of resultIds) expect(await rowOf(a, id)).toMatchObject({ leaseOwner: null, attempt: 1 });
  });

  it("sends the requests of a stage started through its runplane at once, not at the next poll", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await deliveryApp();
    // The first pass is over before the stage starts; the next poll is after the test's timeout.
    const dispatcher = a.dispatcher({ pollIntervalMs: 60_000 });
    const firstPass = firstPassOver(a.runplane.runTasks.deliveries);
    dispatcher.start();
    await firstPass;
    const { resultIds } = await startRun(a, [receiver.url("/1"), receiver.url("/2")]);
    await vi.waitFor(async () => {
      for (const id of resultIds) expect((await resultOf(a, id)).status).toBe("running");
    }, { timeout: 2_000, interval: 5 });
    await dispatcher.stop();
  });

  it("keeps at most `concurrency` attempts in flight", async () => {
    receiver = await startLoopbackServer();
    const held = heldTransport();
    a = await deliveryApp();
    await startRun(a, Array.from({ length: 5 }, (_, i) => receiver.url(`/${i}`)));
    const dispatcher = a.dispatcher({ transport: held.transport, concurrency: 2, pollIntervalMs: 5 });
    dispatcher.start();
    await vi.waitFor(() => expect(held.waiting).toHaveLength(2), { timeout: 2_000, interval: 5 });
    held.waiting[0]!.settle(held.answer(200));
    await vi.waitFor(() => expect(held.waiting).toHaveLength(3), { timeout: 2_000, interval: 5 });
    for (const w of held.waiting) w.settle(held.answer(200));
    await vi.waitFor(() => expect(held.waiting).toHaveLength(5), { timeout: 2_000, interval: 5 });
    for (const w of held.waiting) w.settle(held.answer(200));
    await dispatcher.stop();
  });

  it("keeps 32 attempts in flight by default", async () => {
    receiver = await startLoopbackServer();
    const held = heldTransport();
    a = await deliveryApp();
    await startRun(a, Array.from({ length: 33 }, (_, i) => receiver.url(`/${i}`)));
    // Every attempt begins at `after-claim`, synchronously where the dispatcher starts it.
    let begun = 0;
    const dispatcher = a.dispatcher({ transport: held.transport, pollIntervalMs: 5, failpoint: (name) => void (name === "after-claim" && begun++) });
    dispatcher.start();
    await vi.waitFor(() => expect(held.waiting).toHaveLength(32), { timeout: 2_000, interval: 5 });
    // Two more polls, each of which would start the 33rd if a slot were free; no wall-clock window.
    const claims = vi.spyOn(a.runplane.runTasks.deliveries, "claim");
    await vi.waitFor(() => expect(claims.mock.calls.length).toBeGreaterThanOrEqual(2), { timeout: 2_000, interval: 5 });
    expect(begun).toBe(32);
    expect(held.waiting).toHaveLength(32);
    for (const w of held.waiting) w.settle(held.answer(200));
    await vi.waitFor(() => expect(held.waiting).toHaveLength(33), { timeout: 2_000, interval: 5 });
    held.waiting[32]!.settle(held.answer(200));
    await dispatcher.stop();
  });

  it("lets an attempt in flight finish within the grace period", async () => {
    receiver = await startLoopbackServer();
    const held = heldTransport();
    a = await deliveryApp();
    const { resultIds } = await startRun(a, [receiver.url("/hook")]);
    const dispatcher = a.dispatcher({ transport: held.transport, pollIntervalMs: 5 });
    dispatcher.start();
    await vi.waitFor(() => expect(held.waiting).toHaveLength(1), { timeout: 2_000, interval: 5 });
    const stopped = dispatcher.stop({ graceMs: 5_000 });
    held.waiting[0]!.settle(held.answer(200));
    await stopped;
    expect(await rowOf(a, resultIds[0]!)).toMatchObject({ leaseOwner: null, deliveredAt: iso(a.clock.ms) });
  });

  it("abandons an attempt that outlasts the grace period and releases its row unchanged", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "hang" }));
    // The attempt's own budget outlasts the test (20 s): only abandoning it lets stop() resolve.
    a = await deliveryApp({ transport: loopbackEgress({ timeoutMs: 600_000 }) });
    const { resultIds } = await startRun(a, [receiver.url("/hook")]);
    const dispatcher = a.dispatcher({ pollIntervalMs: 5 });
    dispatcher.start();
    await vi.waitFor(() => expect(deliveriesTo(receiver.requests)).toHaveLength(1), { timeout: 2_000, interval: 5 });
    await dispatcher.stop({ graceMs: 20 });
    // Abandoned on the wire too: the receiver sees its connection closed.
    await receiver.idle();
    expect(await rowOf(a, resultIds[0]!)).toMatchObject({ leaseOwner: null, leaseExpiresAt: null, attempt: 0, closedAt: null });
    expect((await resultOf(a, resultIds[0]!)).status).toBe("pending");
  });
});

describe("dispatcher: one abort signal for its attempts", () => {
  // One signal is shared between the attempts in flight; Node warned (MaxListenersExceeded)
  // at the 11th listener, in every full bench run and in CI.
  it("lets every attempt in flight listen on it without a warning, and aborts them all at stop", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await deliveryApp();
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const held = heldTransport();
      await startRun(a, Array.from({ length: 20 }, (_, i) => receiver.url(`/${i}`)));
      const dispatcher = a.dispatcher({ transport: held.transport, concurrency: 20, pollIntervalMs: 60_000 });
      dispatcher.start();
      await vi.waitFor(() => expect(held.waiting).toHaveLength(20), { timeout: 2_000, interval: 5 });
      await dispatcher.stop({ graceMs: 10 });
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toStrictEqual([]);
      expect(held.waiting.every((w) => w.req.signal?.aborted)).toBe(true);
    } finally {
      process.off("warning", onWarning);
    }
  });
});

describe("dispatcher: a dead dispatcher's rows", () => {
  it("go to another dispatcher once the lease runs out, and the dead one's late answer writes nothing", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    const held = heldTransport();
    a = await deliveryApp();
    const { resultIds } = await startRun(a, [receiver.url("/hook")]);
    const claimedAt = a.clock.ms;
    const dead = a.dispatcher({ transport: held.transport, owner: "dead", leaseMs: 30_000 });
    const deadTick = dead.tick();
    await vi.waitFor(() => expect(held.waiting).toHaveLength(1), { timeout: 2_000, interval: 5 });
    expect(await rowOf(a, resultIds[0]!)).toMatchObject({ leaseOwner: "dead", leaseExpiresAt: iso(claimedAt + 30_000) });

    const next = a.dispatcher({ owner: "next" });
    a.clock.advance(29_999);
    expect((await next.tick()).attempted).toBe(0);
    a.clock.advance(1);
    expect((await next.tick()).delivered).toBe(1);
    const delivered = await rowOf(a, resultIds[0]!);
    expect(delivered).toMatchObject({ attempt: 1, leaseOwner: null });

    held.waiting[0]!.settle(held.answer(500));
    expect(await deadTick).toMatchObject({ failed: 1 });
    expect(await rowOf(a, resultIds[0]!)).toStrictEqual(delivered);
    expect((await resultOf(a, resultIds[0]!)).status).toBe("running");
  });
});

describe("dispatcher: requests it cannot build", () => {
  // decision D40: a host whose keyring lacks the payload's key leaves the row to the hosts that
  // hold it, without spending one of its attempts (it used to fail it, attempt after attempt).
  it("leaves a row sealed under a key this host lacks to hosts holding it, spending no attempt; ends a deleted task's row and result at once", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await deliveryApp();
    const { resultIds, taskIds, stageId } = await startRun(a, [receiver.url("/a"), receiver.url("/b")]);
    const stranger = createRunplane({
      storage: a.storage,
      logger: silentLogger,
      clock: a.clock,
      keyring: createKeyring({ keys: [{ id: "other", key: generateKey() }] }),
      transport: loopbackEgress(),
    });
    expect(await createDispatcher(stranger, { random: () => 0 }).tick()).toMatchObject({ delivered: 0, failed: 0 });
    const keyId = a.runplane.keyring.activeKeyId;
    for (const id of resultIds) expect(await rowOf(a, id)).toMatchObject({ attempt: 0, lastError: `waiting for a host holding key ${keyId}`, leaseOwner: null, closedAt: null });

    await a.runplane.runTasks.tasks.delete(taskIds[1]!);
    a.clock.advance(KEY_WAIT_MS);
    await a.dispatcher().tick();
    const orphan = (await a.runplane.runTasks.listResults(stageId)).find((r) => r.taskId === taskIds[1])!.id;
    const kept = resultIds.find((id) => id !== orphan)!;
    expect(await rowOf(a, kept)).toMatchObject({ attempt: 1, deliveredAt: iso(a.clock.ms) });
    // A deleted task's row is not retried: it closes, and its result ends at once.
    expect(await rowOf(a, orphan)).toMatchObject({ attempt: 1, lastError: "the run task was deleted", closedAt: iso(a.clock.ms) });
    expect(await a.storage.taskResults.get(orphan)).toMatchObject({ status: "unreachable", message: "Task request was not sent: its run task was deleted." });
    expect(deliveriesTo(receiver.requests)).toHaveLength(1);
  });

  it("refuses options that cannot work", () => {
    a = undefined as unknown as DeliveryApp;
    const host = { runTasks: { deliveries: {} as never, settings: {} as never }, transport: loopbackEgress() };
    expect(() => createDispatcher(host, { concurrency: 0 })).toThrow(TypeError);
    expect(() => createDispatcher(host, { leaseMs: -1 })).toThrow(TypeError);
    expect(() => createDispatcher(host, { pollIntervalMs: 1.5 })).toThrow(TypeError);
  });
});

describe("dispatcher: background sweeps", () => {
  it("looks for stages left running once at start and then at most every 30 s, while deadlines are swept every poll", async () => {
    a = await deliveryApp();
    const { deliveries } = a.runplane.runTasks;
    const unsettled = vi.spyOn(deliveries, "listUnsettledStages");
    const expired = vi.spyOn(deliveries, "listExpired");
    const dispatcher = a.dispatcher({ pollIntervalMs: 5 });
    dispatcher.start();
    await vi.waitFor(() => expect(expired.mock.calls.length).toBeGreaterThanOrEqual(5), { timeout: 2_000, interval: 5 });
    await dispatcher.stop();
    expect(unsettled).toHaveBeenCalledTimes(1);
  });
});
