import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { startLoopbackServer, type LoopbackServer, type ReceivedRequest } from "../helpers/loopback-server.js";
import { payloadOf, taskBody } from "../helpers/run-tasks.js";
import { bodyOf, deliveriesTo, deliveryApp, isVerification, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// Decision D14 on the wire: the signature header is the lower-case hex HMAC-SHA512 of exactly the
// bytes that arrived, in the dialect's spelling (D1), present and empty without a key.

let receiver: LoopbackServer;
let a: DeliveryApp;
afterEach(async () => {
  await a.close();
  await receiver.close();
});

const hmac = (key: string, bytes: Buffer): string => createHmac("sha512", key).update(bytes).digest("hex");

/** The raw header line as it crossed the socket (name case-insensitive), or null. */
function rawHeader(req: ReceivedRequest, name: string): string | null {
  const head = req.raw.subarray(0, req.raw.indexOf("\r\n\r\n")).toString("latin1");
  const line = head.split("\r\n").find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line === undefined ? null : line.slice(name.length + 1).trim();
}

describe.each([
  ["default", "X-SVC-Task-Signature", "X-TFC-Task-Signature"],
  ["hcp-terraform", "X-TFC-Task-Signature", "X-SVC-Task-Signature"],
] as const)("signatures in the %s dialect", (dialect, header, other) => {
  it("signs the exact bytes of every request, verification included, with the task's key", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await deliveryApp({ dialect, userAgent: "runplane-test/1" });
    const { resultIds } = await startRun(a, [receiver.url("/hook")], { hmacKey: "s3cret key ✓" });
    await a.dispatcher().tick();

    expect(receiver.requests).toHaveLength(2);
    for (const req of receiver.requests) {
      expect(rawHeader(req, header)).toBe(hmac("s3cret key ✓", req.body));
      expect(rawHeader(req, other)).toBeNull();
      expect(req.headers["content-type"]).toBe("application/json");
      expect(req.headers["user-agent"]).toBe("runplane-test/1");
      expect(req.method).toBe("POST");
      expect(req.path).toBe("/hook");
    }
    const [verification, delivery] = receiver.requests as [ReceivedRequest, ReceivedRequest];
    expect(isVerification(verification)).toBe(true);
    // The body is the outbox payload byte for byte (serialized once at enqueue).
    expect(delivery.body.toString("utf8")).toBe(JSON.stringify(await payloadOf(a.storage, a.keyring, resultIds[0]!)));
    expect(bodyOf(delivery).task_result_id).toBe(resultIds[0]);
  });

  it("sends the header present and empty without a key", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await deliveryApp({ dialect });
    await startRun(a, [receiver.url("/hook")]);
    await a.dispatcher().tick();
    expect(receiver.requests).toHaveLength(2);
    for (const req of receiver.requests) {
      expect(rawHeader(req, header)).toBe("");
      expect(req.headers[header.toLowerCase()]).toBe("");
    }
  });
});

describe("signatures across retries", () => {
  it("signs each attempt with the task's current key over the same bytes", async () => {
    receiver = await startLoopbackServer(tasksAnswer((_req, index) => ({ kind: "respond", status: index < 2 ? 500 : 200 })));
    a = await deliveryApp();
    const { resultIds, taskIds } = await startRun(a, [receiver.url("/hook")], { hmacKey: "old-key" });
    await a.dispatcher().tick();

    const patch = await a.call("PATCH", `/api/v2/tasks/${taskIds[0]}`, { body: taskBody({ "hmac-key": "new-key" }) });
    expect(patch.status).toBe(200);
    a.clock.advance(1_000);
    await a.dispatcher().tick();

    const [first, second] = deliveriesTo(receiver.requests) as [ReceivedRequest, ReceivedRequest];
    expect(second.body.equals(first.body)).toBe(true);
    expect(rawHeader(first, "X-SVC-Task-Signature")).toBe(hmac("old-key", first.body));
    expect(rawHeader(second, "X-SVC-Task-Signature")).toBe(hmac("new-key", second.body));
    // The key change itself was verified with the new key before it was saved.
    const keyCheck = receiver.requests.filter(isVerification)[1]!;
    expect(rawHeader(keyCheck, "X-SVC-Task-Signature")).toBe(hmac("new-key", keyCheck.body));
    expect((await a.storage.taskResults.get(resultIds[0]!))?.status).toBe("running");
  });
});
