import { afterEach, describe, expect, it } from "vitest";
import { createConsoleLogger } from "../../src/index.js";
import { startLoopbackServer, type LoopbackServer, type ReceivedRequest } from "../helpers/loopback-server.js";
import { taskBody } from "../helpers/run-tasks.js";
import { bodyOf, deliveriesTo, deliveryApp, MINUTE, resultOf, rowOf, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// Decision D31: what the integration said travels with runplane's own words for a failed
// attempt (the delivery's last error, the unreachable result's message, the log line) and for a
// refused verification, redacted of the request's secrets like the attempt's excerpt.

let receiver: LoopbackServer;
let a: DeliveryApp;
let lines: Record<string, any>[];
afterEach(async () => {
  await a?.close();
  await receiver?.close();
});

const HMAC_KEY = "answer-words-hmac-key-0042";
const SCAFFOLD = 'Bad Request: unsupported plan format version: expected "0.1", got "1.2"';
const text = (status: number, body: string) => ({ kind: "respond" as const, status, headers: { "content-type": "text/plain; charset=utf-8" }, body });

async function app(): Promise<DeliveryApp> {
  lines = [];
  return deliveryApp({ logger: createConsoleLogger({ level: "debug", write: (line) => void lines.push(JSON.parse(line)) }) });
}

describe("a failed attempt in the integration's words", () => {
  it("says what a 404 said in the delivery's last error, the retry's log line and the unreachable result's message", async () => {
    receiver = await startLoopbackServer(tasksAnswer(text(404, SCAFFOLD)));
    a = await app();
    const { resultIds } = await startRun(a, [receiver.url("/hook")]);
    await a.dispatcher().tick();
    const words = `responded with 404: ${SCAFFOLD}`;
    expect((await rowOf(a, resultIds[0]!)).lastError).toBe(words);
    expect(lines.find((l) => l.event === "delivery.retry")).toMatchObject({ status: 404, error: words });
    a.clock.advance(11 * MINUTE);
    await a.dispatcher().tick();
    expect((await resultOf(a, resultIds[0]!)).message).toBe(`Task request was not delivered before the deadline: ${words}.`);
  });

  it("shows [redacted] where an integration echoing the request repeats its key, access token or signature", async () => {
    const echo = (req: ReceivedRequest) => text(401, `signature ${req.headers["x-svc-task-signature"]} does not match key ${HMAC_KEY} for token ${bodyOf(req).access_token}`);
    receiver = await startLoopbackServer(tasksAnswer(echo));
    a = await app();
    const { resultIds } = await startRun(a, [receiver.url("/hook")], { hmacKey: HMAC_KEY });
    await a.dispatcher().tick();
    const [sent] = deliveriesTo(receiver.requests);
    const lastError = (await rowOf(a, resultIds[0]!)).lastError!;
    expect(lastError).toBe("responded with 401: signature [redacted] does not match key [redacted] for token [redacted]");
    const logged = JSON.stringify(lines);
    for (const secret of [HMAC_KEY, bodyOf(sent!).access_token as string, sent!.headers["x-svc-task-signature"]!]) expect(logged).not.toContain(secret);
  });

  it("keeps a long or many-lined answer to one short line, and a 404 without a body as it was", async () => {
    receiver = await startLoopbackServer(tasksAnswer((_req, i) => (i === 1 ? text(500, `line one\n\n\tline two ${"x".repeat(2000)}`) : { kind: "respond", status: 404 })));
    a = await app();
    const { resultIds } = await startRun(a, [receiver.url("/hook")]);
    await a.dispatcher().tick();
    const long = (await rowOf(a, resultIds[0]!)).lastError!;
    expect(long.startsWith("responded with 500: line one line two xxx")).toBe(true);
    expect(long.endsWith("...")).toBe(true);
    expect(long.length).toBeLessThanOrEqual("responded with 500: ".length + 200);
    a.clock.advance(MINUTE);
    await a.dispatcher().tick();
    expect((await rowOf(a, resultIds[0]!)).lastError).toBe("responded with 404");
  });
});

describe("a refused verification in the integration's words", () => {
  it("puts what the endpoint answered in the 422, its key redacted", async () => {
    receiver = await startLoopbackServer(text(401, `no such key: ${HMAC_KEY}`));
    a = await app();
    const res = await a.call("POST", "/api/v2/organizations/acme/tasks", { body: taskBody({ name: "words", url: receiver.url("/hook"), "hmac-key": HMAC_KEY }) });
    expect(res.status).toBe(422);
    expect(res.json.errors[0].detail).toMatch(/^The run task URL responded with 401 to the verification request: no such key: \[redacted\]; it must answer 200\. /);
    expect(res.text).not.toContain(HMAC_KEY);
  });
});
