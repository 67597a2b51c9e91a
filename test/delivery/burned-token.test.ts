import { afterEach, describe, expect, it } from "vitest";
import { loopbacksClosedAfterEach, type ReceivedRequest } from "../helpers/loopback-server.js";
import { callbackBody, sendCallback } from "../helpers/run-tasks.js";
import { deliveriesTo, deliveryApp, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// decision D42: a callback access token that an answer of the integration spelled, in any form the
// redaction recognised, is burned before the answer's excerpt is stored: the callback refuses it
// (401, like any wrong token), so a form the redaction did not recognise is worth nothing either.

let a: DeliveryApp;
const loopback = loopbacksClosedAfterEach();
afterEach(() => a.close());

const htmlDecimal = (text: string): string => [...text].map((ch) => `&#${ch.charCodeAt(0)};`).join("");
const tokenOf = (req: ReceivedRequest): string => (JSON.parse(req.body.toString()) as { access_token: string }).access_token;

async function deliveredOnce(answer: (req: ReceivedRequest) => string, status = 400) {
  a = await deliveryApp();
  const server = await loopback(tasksAnswer((req) => ({ kind: "respond" as const, status, headers: { "content-type": "text/plain" }, body: answer(req) })));
  const { resultIds } = await startRun(a, [server.url("/hook")]);
  await a.dispatcher().tick();
  const [sent] = deliveriesTo(server.requests);
  const resultId = resultIds[0]!;
  const [attempt] = (await a.runplane.runTasks.listDeliveryAttempts(resultId, { offset: 0, limit: 1 })).items;
  return { token: tokenOf(sent!), resultId, excerpt: attempt!.excerpt };
}

describe("a callback token an answer spelled (D42)", () => {
  it("is refused by the callback once the answer's excerpt redacted it, whatever the encoding", async () => {
    const { token, resultId, excerpt } = await deliveredOnce((req) => `rejected, your token was ${htmlDecimal(tokenOf(req))}`);
    expect(excerpt).toBe("rejected, your token was [redacted]");
    const callback = await sendCallback(a, resultId, token, callbackBody("passed"));
    expect(callback.status).toBe(401);
    expect((await a.runplane.runTasks.getResult(resultId))!.status).toBe("pending");
  });

  it("is burned by a 200 that spells it too, and the result still moves to running", async () => {
    const { token, resultId, excerpt } = await deliveredOnce((req) => `{"received":"${Buffer.from(tokenOf(req)).toString("hex")}"}`, 200);
    expect(excerpt).toBe('{"received":"[redacted]"}');
    expect((await a.runplane.runTasks.getResult(resultId))!.status).toBe("running");
    expect((await sendCallback(a, resultId, token, callbackBody("passed"))).status).toBe(401);
    expect((await a.runplane.runTasks.getResult(resultId))!.status).toBe("running");
  });

  it("stays valid when no answer spelled it", async () => {
    const { token, resultId, excerpt } = await deliveredOnce(() => "rejected: try again later");
    expect(excerpt).toBe("rejected: try again later");
    expect((await sendCallback(a, resultId, token, callbackBody("passed"))).status).toBe(200);
    expect((await a.runplane.runTasks.getResult(resultId))!.status).toBe("passed");
  });
});
