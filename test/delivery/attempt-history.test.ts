import { afterEach, describe, expect, it } from "vitest";
import { REDACTED } from "../../src/domain/response-excerpt.js";
import type { DeliveryAttemptRecord } from "../../src/schemas/delivery-attempts.js";
import { leakedSpellings } from "../helpers/secret-encodings.js";
import { loopbacksClosedAfterEach, startLoopbackServer, type LoopbackServer, type ReceivedRequest, type Script } from "../helpers/loopback-server.js";
import { bodyOf, deliveriesTo, deliveryApp, MINUTE, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// Decision D31: every delivery attempt is recorded with its settlement: when it started, how long
// it took, its outcome and up to 1 KiB of the answer with the attempt's secrets redacted; a result
// keeps its newest 20, and the dispatcher's sweep prunes what is older than the retention.

let a: DeliveryApp;
const loopback = loopbacksClosedAfterEach();
afterEach(() => a.close());

const attemptsOf = async (resultId: string): Promise<DeliveryAttemptRecord[]> =>
  (await a.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 100 })).items;

const HMAC_KEY = "correct-horse-battery-staple-42";

describe("delivery attempts: what each attempt saw (D31)", () => {
  it("keeps what an integration that echoes the whole request answered, without the access token, the HMAC key or the signature", async () => {
    a = await deliveryApp();
    // The integration answers 400 with the request it got: its key in its error, its head and
    // body as they arrived, and a base64 copy of the body.
    const echo = (req: ReceivedRequest) => {
      const raw = req.raw.toString("utf8");
      return { kind: "respond" as const, status: 400, headers: { "content-type": "text/plain" }, body: `wrong signature for key ${HMAC_KEY}\nb64 ${req.body.toString("base64").slice(0, 160)}\n${raw}` };
    };
    const server = await loopback(tasksAnswer(echo));
    const { resultIds } = await startRun(a, [server.url("/hook")], { hmacKey: HMAC_KEY });
    await a.dispatcher().tick();
    const [sent] = deliveriesTo(server.requests);
    const token = bodyOf(sent!).access_token as string;
    const signature = sent!.headers["x-svc-task-signature"]!;
    expect(signature).toMatch(/^[0-9a-f]{128}$/);

    const [attempt] = await attemptsOf(resultIds[0]!);
    expect(attempt).toMatchObject({ number: 1, outcome: "answered", status: 400, errorCode: null, detail: "responded with 400", excerptTruncated: true });
    const excerpt = attempt!.excerpt!;
    expect(Buffer.byteLength(excerpt, "utf8")).toBeLessThanOrEqual(1024);
    // The echo is there, with each secret replaced where it stood.
    expect(excerpt).toContain(`wrong signature for key ${REDACTED}`);
    expect(excerpt).toContain(`X-SVC-Task-Signature: ${REDACTED}`);
    expect(excerpt).toContain(`"access_token":"${REDACTED}"`);
    expect(leakedSpellings(excerpt, { token, key: HMAC_KEY, signature })).toStrictEqual([]);
    expect(excerpt).not.toMatch(/[\r\u0000-\u0008]/);
    // And nothing of them anywhere else the attempt left in storage.
    const stored = JSON.stringify(await a.storage.deliveryAttempts.list(resultIds[0]!, { offset: 0, limit: 20 }));
    for (const secret of [token, HMAC_KEY, signature]) expect(stored).not.toContain(secret);
  });

  it("records a 200 with its answer and its start on the instance's clock", async () => {
    a = await deliveryApp();
    const server = await loopback(tasksAnswer({ kind: "respond", status: 200, headers: { "content-type": "application/json" }, body: '{"accepted":true}' }));
    const { resultIds } = await startRun(a, [server.url("/hook")]);
    await a.dispatcher().tick();
    const [attempt] = await attemptsOf(resultIds[0]!);
    expect(attempt).toMatchObject({ number: 1, startedAt: new Date(a.clock.ms).toISOString(), outcome: "answered", status: 200, detail: "responded with 200", excerpt: '{"accepted":true}', excerptTruncated: false });
    expect(attempt!.id).toMatch(/^tda-[0-9A-Za-z]{16}$/);
    expect(attempt!.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("records a refused connection by its error code, with no excerpt", async () => {
    a = await deliveryApp();
    const server = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    const { resultIds } = await startRun(a, [server.url("/hook")]);
    // The integration goes away after its URL was saved: nothing listens on the port any more.
    await server.close();
    await a.dispatcher().tick();
    expect(await attemptsOf(resultIds[0]!)).toMatchObject([
      { number: 1, outcome: "failed", status: null, errorCode: "ECONNREFUSED", detail: "the connection failed (ECONNREFUSED)", excerpt: null, excerptTruncated: false },
    ]);
  });

  it("records an attempt that sent nothing as skipped, and why", async () => {
    a = await deliveryApp();
    const server = await loopback(tasksAnswer({ kind: "respond", status: 200 }));
    const { resultIds, taskIds } = await startRun(a, [server.url("/hook")]);
    await a.runplane.runTasks.tasks.delete(taskIds[0]!);
    await a.dispatcher().tick();
    expect(deliveriesTo(server.requests)).toHaveLength(0);
    expect(await attemptsOf(resultIds[0]!)).toMatchObject([{ number: 1, outcome: "skipped", status: null, errorCode: null, detail: "the run task was deleted", excerpt: null }]);
    // Found from outside: it was retried 16 times over 10 minutes and ended only at the deadline.
    // A deleted task's request can never be sent: the result ends at once and says why.
    expect(await a.storage.taskResults.get(resultIds[0]!)).toMatchObject({ status: "unreachable", message: "Task request was not sent: its run task was deleted." });
    const [row] = await a.storage.taskDeliveries.listByResult(resultIds[0]!);
    expect(row).toMatchObject({ attempt: 1, lastError: "the run task was deleted" });
    expect(row!.closedAt).not.toBeNull();
  });

  it("keeps a result's newest 20 attempts", async () => {
    a = await deliveryApp({ deadline: { idle: "2h", max: "2h" } });
    const server = await loopback(tasksAnswer({ kind: "respond", status: 500, body: "down" }));
    const { resultIds } = await startRun(a, [server.url("/hook")]);
    for (let i = 0; i < 25; i++) {
      expect((await a.dispatcher().tick()).failed).toBe(1);
      a.clock.advance(MINUTE + 1);
    }
    const kept = await a.runplane.runTasks.listDeliveryAttempts(resultIds[0]!, { offset: 0, limit: 100 });
    expect(kept.total).toBe(20);
    expect(kept.items.map((x) => x.number)).toStrictEqual(Array.from({ length: 20 }, (_, i) => 25 - i));
    expect(kept.items.every((x) => x.status === 500 && x.excerpt === "down")).toBe(true);
  });

  it("prunes attempts older than attempts.retention in the dispatcher's sweep, by the instance's clock", async () => {
    a = await deliveryApp({ deadline: { idle: "2h", max: "2h" }, attempts: { retention: "1h" } });
    const server = await loopback(tasksAnswer({ kind: "respond", status: 503 }));
    const { resultIds } = await startRun(a, [server.url("/hook")]);
    const numbers = async () => (await attemptsOf(resultIds[0]!)).map((x) => x.number);
    await a.dispatcher().tick();
    a.clock.advance(40 * MINUTE);
    await a.dispatcher().tick();
    a.clock.advance(19 * MINUTE);
    await a.dispatcher().tick();
    expect(await numbers()).toStrictEqual([3, 2, 1]);
    // 70 minutes after the first attempt: it is past the hour, the second (30 minutes old) is not.
    a.clock.advance(11 * MINUTE);
    await a.dispatcher().tick();
    expect(await numbers()).toStrictEqual([4, 3, 2]);
  });
});
