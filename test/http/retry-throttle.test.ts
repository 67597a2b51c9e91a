import { afterEach, describe, expect, it } from "vitest";
import { loopbacksClosedAfterEach } from "../helpers/loopback-server.js";
import { deliveryApp, startRun, tasksAnswer, type DeliveryApp } from "../delivery/support.js";

// Decision D33: "retry now" (`POST /task-results/:id/actions/retry`) starts at most one attempt per
// result in a 10-second window, however often it is asked for; another result is not held back.
// The clock stands still until the test moves it.

let a: DeliveryApp;
const loopback = loopbacksClosedAfterEach();
afterEach(() => a.close());

const retryPath = (id: string) => `/api/v2/task-results/${id}/actions/retry`;

/** Two results whose first attempts were answered 503: each waits for its backoff. */
async function twoRetrying() {
  a = await deliveryApp();
  const server = await loopback(tasksAnswer({ kind: "respond", status: 503, body: "maintenance" }));
  const { resultIds } = await startRun(a, [server.url("/one"), server.url("/two")]);
  expect((await a.dispatcher().tick()).failed).toBe(2);
  return resultIds as [string, string];
}

describe("retry now, throttled per result (D33)", () => {
  it("answers a second retry of one result within 10 seconds 429 with Retry-After, and changes nothing", async () => {
    const [first, second] = await twoRetrying();
    expect((await a.call("POST", retryPath(first))).status).toBe(202);
    const due = (await a.storage.taskDeliveries.listByResult(first))[0]!.dueAt;
    a.clock.advance(4_000);
    const again = await a.call("POST", retryPath(first));
    expect(again.status).toBe(429);
    expect(again.headers.get("retry-after")).toBe("6");
    expect(again.json.errors[0]).toMatchObject({ status: "429", title: "too many requests" });
    expect(again.json.errors[0].detail).toMatch(/retried moments ago; retry again in 6 seconds/);
    expect((await a.storage.taskDeliveries.listByResult(first))[0]!.dueAt).toBe(due);
    // Another result is not held back by the first one's retry.
    expect((await a.call("POST", retryPath(second))).status).toBe(202);
  });

  it("lets the result be retried again once the window has passed", async () => {
    const [first] = await twoRetrying();
    expect((await a.call("POST", retryPath(first))).status).toBe(202);
    // The attempt the retry asked for is made and fails again (503): the result is retrying.
    expect((await a.dispatcher().tick()).failed).toBe(1);
    a.clock.advance(9_999);
    expect((await a.call("POST", retryPath(first))).status).toBe(429);
    a.clock.advance(1);
    expect((await a.call("POST", retryPath(first))).status).toBe(202);
  });

  it("counts only a retry that started an attempt: a refused one (409) does not start the window", async () => {
    a = await deliveryApp();
    const server = await loopback(tasksAnswer({ kind: "respond", status: 503 }));
    const { resultIds } = await startRun(a, [server.url("/one")]);
    // Not sent yet: nothing to retry (409), and no window started.
    expect((await a.call("POST", retryPath(resultIds[0]!))).status).toBe(409);
    expect((await a.dispatcher().tick()).failed).toBe(1);
    expect((await a.call("POST", retryPath(resultIds[0]!))).status).toBe(202);
  });

  it("holds for the programmatic retry too (the same service)", async () => {
    const [first] = await twoRetrying();
    await a.runplane.runTasks.retryDelivery(first);
    await expect(a.runplane.runTasks.retryDelivery(first)).rejects.toMatchObject({ code: "too-many-requests", status: 429 });
  });
});
