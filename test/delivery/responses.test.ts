import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startLoopbackServer, type LoopbackServer, type Reply } from "../helpers/loopback-server.js";
import { deliveriesTo, deliveryApp, iso, MINUTE, resultOf, rowOf, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// Decision D15 over real loopback sockets: exactly 200 is success; every other answer, a timeout
// or a network error schedules a retry, 1 s doubling to 60 s (random fixed at 0: no jitter),
// until the deadline (D16), after which nothing is sent and the sweeper settles the result.

let receiver: LoopbackServer;
let a: DeliveryApp;

beforeEach(async () => {
  receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
  a = await deliveryApp();
});
afterEach(async () => {
  await a.close();
  await receiver.close();
});

/** One mandatory task at the receiver, its stage started at the current time. */
async function oneResult(): Promise<string> {
  return (await startRun(a, [receiver.url("/hook")])).resultIds[0]!;
}

describe("delivery: a 200", () => {
  it("delivers on the first attempt: the result runs and the row closes as delivered", async () => {
    const id = await oneResult();
    const report = await a.dispatcher().tick();
    expect(report).toStrictEqual({ attempted: 1, delivered: 1, failed: 0, expired: 0 });
    expect((await resultOf(a, id)).status).toBe("running");
    expect(await rowOf(a, id)).toMatchObject({ attempt: 1, deliveredAt: iso(a.clock.ms), closedAt: iso(a.clock.ms), lastError: null, leaseOwner: null });
    a.clock.advance(MINUTE);
    expect((await a.dispatcher().tick()).attempted).toBe(0);
    expect(deliveriesTo(receiver.requests)).toHaveLength(1);
  });

  it("counts a 200 whose 100 MB body is cut at 64 KiB as delivered, reading no further", async () => {
    receiver.setScript(tasksAnswer({ kind: "huge", status: 200, bytes: 100 * 1024 * 1024 }));
    const id = await oneResult();
    expect((await a.dispatcher().tick()).delivered).toBe(1);
    expect((await resultOf(a, id)).status).toBe("running");
    await receiver.idle();
    expect(receiver.bodyBytesSent).toBeLessThan(16 * 1024 * 1024);
  });
});

/** The answers that are not exactly 200, with what each leaves in `lastError`. */
const FAILURES: [string, Reply | "refused", string][] = [
  ["201", { kind: "respond", status: 201 }, "responded with 201"],
  ["204", { kind: "respond", status: 204 }, "responded with 204"],
  ["400", { kind: "respond", status: 400, body: "bad" }, "responded with 400: bad"],
  ["404", { kind: "respond", status: 404 }, "responded with 404"],
  ["500", { kind: "respond", status: 500 }, "responded with 500"],
  ["503", { kind: "respond", status: 503 }, "responded with 503"],
  ["a 500 with a 100 MB body", { kind: "huge", status: 500, bytes: 100 * 1024 * 1024 }, `responded with 500: ${"a".repeat(197)}...`],
  ["a reset connection", { kind: "reset" }, "the connection failed (ECONNRESET)"],
  ["a receiver that never answers", { kind: "hang" }, "the request timed out"],
  ["a 200 whose body dribbles past the budget", { kind: "dribble", status: 200, chunk: "x", intervalMs: 50, count: 100 }, "the request timed out"],
  ["a refused connection", "refused", "the connection failed (ECONNREFUSED)"],
];

describe("delivery: anything but 200 is retried, 1 s doubling, until the deadline", () => {
  it.each(FAILURES)("retries %s, then sends nothing after the deadline and ends unreachable", async (_name, reply, lastError) => {
    const id = await oneResult();
    if (reply === "refused") await receiver.close();
    else receiver.setScript(tasksAnswer(reply));
    const first = a.clock.ms;

    expect((await a.dispatcher().tick()).failed).toBe(1);
    expect(await rowOf(a, id)).toMatchObject({ attempt: 1, dueAt: iso(first + 1_000), lastError, closedAt: null, leaseOwner: null });
    a.clock.advance(999);
    expect((await a.dispatcher().tick()).attempted).toBe(0);
    a.clock.advance(1);
    expect((await a.dispatcher().tick()).failed).toBe(1);
    expect(await rowOf(a, id)).toMatchObject({ attempt: 2, dueAt: iso(first + 1_000 + 2_000), lastError });
    const sent = deliveriesTo(receiver.requests).length;
    expect(sent).toBe(reply === "refused" ? 0 : 2);

    // The deadline: 10 minutes after the first attempt. The due row is closed unsent.
    a.clock.set(first + 10 * MINUTE);
    const last = await a.dispatcher().tick();
    expect(last).toStrictEqual({ attempted: 0, delivered: 0, failed: 0, expired: 1 });
    expect(deliveriesTo(receiver.requests)).toHaveLength(sent);
    expect(await resultOf(a, id)).toMatchObject({
      status: "unreachable",
      message: `Task request was not delivered before the deadline: ${lastError}.`,
    });
    expect((await rowOf(a, id)).closedAt).toBe(iso(first + 10 * MINUTE));
  });

  it.each([301, 302, 307, 308])("retries a %i and never contacts its Location", async (status) => {
    const target = await startLoopbackServer();
    try {
      receiver.setScript(tasksAnswer({ kind: "respond", status, headers: { location: target.url("/stolen") } }));
      const id = await oneResult();
      await a.dispatcher().tick();
      expect(await rowOf(a, id)).toMatchObject({ attempt: 1, lastError: `responded with ${status}` });
      expect(target.connections).toBe(0);
    } finally {
      await target.close();
    }
  });

  it("honours Retry-After on a 429 when longer than the backoff, capped at 60 s", async () => {
    const id = await oneResult();
    const first = a.clock.ms;
    receiver.setScript(tasksAnswer({ kind: "respond", status: 429, headers: { "retry-after": "5" } }));
    await a.dispatcher().tick();
    expect((await rowOf(a, id)).dueAt).toBe(iso(first + 5_000));
    a.clock.advance(5_000);
    receiver.setScript(tasksAnswer({ kind: "respond", status: 429, headers: { "retry-after": "3600" } }));
    await a.dispatcher().tick();
    expect((await rowOf(a, id)).dueAt).toBe(iso(first + 5_000 + 60_000));
    a.clock.advance(60_000);
    // A Retry-After shorter than the backoff (third failure: 4 s) does not shorten it.
    receiver.setScript(tasksAnswer({ kind: "respond", status: 503, headers: { "retry-after": new Date(a.clock.ms + 1_000).toUTCString() } }));
    await a.dispatcher().tick();
    expect((await rowOf(a, id)).dueAt).toBe(iso(first + 65_000 + 4_000));
  });

  it("spaces a stubborn receiver's attempts 1, 2, 4 ... 60, 60 s and stops before the deadline", async () => {
    receiver.setScript(tasksAnswer({ kind: "respond", status: 500 }));
    const id = await oneResult();
    const first = a.clock.ms;
    const gaps: number[] = [];
    for (;;) {
      const before = await rowOf(a, id);
      a.clock.set(Date.parse(before.dueAt));
      await a.dispatcher().tick();
      const after = await rowOf(a, id);
      if (after.closedAt !== null) break;
      gaps.push(Date.parse(after.dueAt) - a.clock.ms);
    }
    expect(gaps).toStrictEqual([1, 2, 4, 8, 16, 32, 60, 60, 60, 60, 60, 60, 60, 60].map((s) => s * 1_000));
    const attempts = deliveriesTo(receiver.requests).length;
    expect(attempts).toBe(gaps.length + 1);
    // The last attempt went out before the deadline; the next would not have started before it.
    expect(a.clock.ms).toBeLessThan(first + 10 * MINUTE);
    expect(a.clock.ms + 60_000).toBeGreaterThanOrEqual(first + 10 * MINUTE);
    expect((await resultOf(a, id)).status).toBe("pending");
    a.clock.set(first + 10 * MINUTE);
    expect((await a.dispatcher().tick()).expired).toBe(1);
    expect(deliveriesTo(receiver.requests)).toHaveLength(attempts);
    expect((await resultOf(a, id)).status).toBe("unreachable");
  });

  it("shortens each delay by up to 20 % with jitter", async () => {
    receiver.setScript(tasksAnswer({ kind: "respond", status: 500 }));
    const id = await oneResult();
    const first = a.clock.ms;
    await a.dispatcher({ random: () => 0.5 }).tick();
    expect((await rowOf(a, id)).dueAt).toBe(iso(first + 900));
    a.clock.advance(900);
    await a.dispatcher({ random: () => 0.999 }).tick();
    expect((await rowOf(a, id)).dueAt).toBe(iso(first + 900 + 1_601));
  });
});
