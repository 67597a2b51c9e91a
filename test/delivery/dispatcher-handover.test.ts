import { afterEach, describe, expect, it, vi } from "vitest";
import type { HttpRequest, HttpTransport } from "../../src/index.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { deliveryApp, heldTransport, resultIdOf, resultOf, rowOf, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// Handing rows from one dispatcher to the next (decision D15). A graceful stop leaves
// nothing held and nothing unrecorded, so a restarted dispatcher sends every unanswered row at once
// and no answered one again; a row whose lease is about to run out is given back, never sent.

let receiver: LoopbackServer;
let a: DeliveryApp;
afterEach(async () => {
  await a?.close();
  await receiver?.close();
});

/** An in-process integration answering `status` at once; `sent` lists the result ids it was asked about. */
function answering(status = 200) {
  const sent: string[] = [];
  const transport: HttpTransport = {
    send: async (req: HttpRequest) => (sent.push(resultIdOf(req)), { status, headers: {}, body: "", bodyTruncated: false }),
    close: async () => {},
  };
  return { transport, sent };
}

/** A run whose `count` results each wait for their first request (tasks verified on creation). */
async function backlog(count: number) {
  receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
  a = await deliveryApp();
  return startRun(a, Array.from({ length: count }, (_, i) => receiver.url(`/${i}`)));
}

const waitUntil = (check: () => void | Promise<void>) => vi.waitFor(check, { timeout: 5_000, interval: 5 });

describe("dispatcher handover: a graceful stop and restart", () => {
  it("sends every unanswered row again at once and no answered one twice", async () => {
    const { resultIds } = await backlog(4);
    const held = heldTransport();
    const first = a.dispatcher({ transport: held.transport, concurrency: 2, pollIntervalMs: 60_000, owner: "first" });
    first.start();
    await waitUntil(() => expect(held.waiting).toHaveLength(2));
    // The first answer frees a slot: a third row goes out; the fourth stays queued.
    held.waiting[0]!.settle(held.answer(200));
    await waitUntil(() => expect(held.waiting).toHaveLength(3));
    const stopping = first.stop({ graceMs: 60_000 });
    // Answered within the grace period: one delivered, one failed (its retry is due in 1 s).
    held.waiting[1]!.settle(held.answer(200));
    held.waiting[2]!.settle(held.answer(500));
    await stopping;

    const [answered, late, failed] = held.waiting.map((w) => resultIdOf(w.req));
    const queued = resultIds.find((id) => ![answered, late, failed].includes(id))!;
    for (const id of resultIds) expect(await rowOf(a, id), id).toMatchObject({ leaseOwner: null, leaseExpiresAt: null });
    const next = answering();
    const restarted = a.dispatcher({ transport: next.transport, owner: "restarted" });
    // Same instant: no row waits out a lease; the failed one waits for its retry only.
    expect(await restarted.tick()).toMatchObject({ attempted: 1, delivered: 1 });
    expect(next.sent).toStrictEqual([queued]);
    a.clock.advance(1_000);
    expect(await restarted.tick()).toMatchObject({ attempted: 1, delivered: 1 });
    expect(next.sent).toStrictEqual([queued, failed]);
    for (const id of [answered!, late!]) expect(await rowOf(a, id)).toMatchObject({ attempt: 1, deliveredAt: expect.any(String) });
  });

  it("resolves its stop only once the rows it gave back for too short a lease are stored", async () => {
    const { resultIds } = await backlog(3);
    const { deliveries } = a.runplane.runTasks;
    const claim = deliveries.claim;
    // A claim that took 16 s: half of the 30 s leases is gone before any row could start.
    vi.spyOn(deliveries, "claim").mockImplementationOnce(async (request) => {
      const rows = await claim(request);
      a.clock.advance(16_000);
      return rows;
    });
    const release = deliveries.release;
    let givingBack!: () => void;
    const gaveBack = new Promise<void>((resolve) => (givingBack = resolve));
    vi.spyOn(deliveries, "release").mockImplementation((row) => (givingBack(), release(row)));
    const held = heldTransport();
    const first = a.dispatcher({ transport: held.transport, pollIntervalMs: 60_000, owner: "first" });
    first.start();
    // The host stops the dispatcher the moment it is giving rows back (a SIGTERM comes any time).
    await gaveBack;
    await first.stop();
    expect(held.waiting).toHaveLength(0);

    const next = answering();
    expect(await a.dispatcher({ transport: next.transport, owner: "restarted" }).tick()).toMatchObject({ delivered: 3 });
    expect(next.sent.sort()).toStrictEqual([...resultIds].sort());
  });
});

describe("dispatcher handover: a lease about to run out", () => {
  it("gives a row back unsent rather than start it on a lease another dispatcher may take over", async () => {
    const { resultIds } = await backlog(2);
    const held = heldTransport();
    const first = a.dispatcher({ transport: held.transport, concurrency: 1, pollIntervalMs: 60_000, owner: "first" });
    first.start();
    await waitUntil(() => expect(held.waiting).toHaveLength(1));
    const [sent, other] = [resultIdOf(held.waiting[0]!.req), ...resultIds.filter((id) => id !== resultIdOf(held.waiting[0]!.req))];
    // 16 s into the 30 s lease the first answer comes: 14 s is too little to start the other row on.
    a.clock.advance(16_000);
    held.waiting[0]!.settle(held.answer(200));
    await waitUntil(async () => {
      expect((await resultOf(a, sent!)).status).toBe("running");
      expect(held.waiting.length === 2 || (await rowOf(a, other!)).leaseOwner === null).toBe(true);
    });

    // The lease has run out either way: a second dispatcher takes the row.
    a.clock.advance(14_000);
    const second = answering();
    expect(await a.dispatcher({ transport: second.transport, owner: "second" }).tick()).toMatchObject({ delivered: 1 });
    const requests = [...held.waiting.map((w) => resultIdOf(w.req)), ...second.sent];
    expect(requests.filter((id) => id === other)).toHaveLength(1);
    expect(held.waiting).toHaveLength(1);
    await first.stop({ graceMs: 0 });
  });
});

describe("dispatcher handover: backlogs and ticks", () => {
  it("drains a backlog of five batches without waiting for a poll", async () => {
    const { resultIds } = await backlog(20);
    const integration = answering();
    const dispatcher = a.dispatcher({ transport: integration.transport, batchSize: 4, concurrency: 2, pollIntervalMs: 60_000 });
    dispatcher.start();
    await waitUntil(() => expect(integration.sent).toHaveLength(20));
    await dispatcher.stop();
    for (const id of resultIds) expect((await resultOf(a, id)).status).toBe("running");
  });

  it("gives back a row that came due again within one tick, so the next tick sends it at once", async () => {
    const { resultIds } = await backlog(1);
    const failing = answering(503);
    // The retry (1 s) comes due while the tick still runs: it is claimed again within the tick.
    const tick = a.dispatcher({ transport: failing.transport, batchSize: 1, failpoint: (name) => void (name === "after-settle-batch" && a.clock.advance(1_000)) });
    expect(await tick.tick()).toMatchObject({ attempted: 1, failed: 1 });
    expect(failing.sent).toHaveLength(1);
    expect(await rowOf(a, resultIds[0]!)).toMatchObject({ attempt: 1, leaseOwner: null, leaseExpiresAt: null });
    const next = answering();
    expect(await a.dispatcher({ transport: next.transport, owner: "next" }).tick()).toMatchObject({ delivered: 1 });
    expect(next.sent).toStrictEqual(resultIds);
  });
});
