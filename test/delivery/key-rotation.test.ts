import { afterEach, describe, expect, it } from "vitest";
import { createDispatcher, createKeyring, createRunplane, generateKey, silentLogger, type KeyringOptions, type Runplane } from "../../src/index.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { deliveriesTo, deliveryApp, loopbackEgress, noRealDns, resultOf, rowOf, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// Decision D29: a rotation (new key, reencrypt, old key removed) while a
// delivery is being retried loses nothing, and a host still on the old keyring reloads it.

const k1 = { id: "k1", key: generateKey() };
const k2 = { id: "k2", key: generateKey() };
const ROTATED: KeyringOptions = { keys: [k1, k2], active: "k2" };

let receiver: LoopbackServer;
let a: DeliveryApp;
const others: Runplane[] = [];
afterEach(async () => {
  for (const r of others.splice(0)) await r.close();
  await a?.close();
  await receiver?.close();
});

/** A second host on `a`'s storage and clock with `keyring`, reaching 127.0.0.1 only. */
function host(keyring: KeyringOptions | ReturnType<typeof createKeyring>): Runplane {
  const runplane = createRunplane({
    storage: a.storage,
    keyring,
    clock: a.clock,
    logger: silentLogger,
    publicUrl: "https://runplane.example",
    egress: { allow: ["127.0.0.1/32"], resolve: noRealDns },
    transport: loopbackEgress(),
  });
  others.push(runplane);
  return runplane;
}

/** A run whose one request (HMAC-signed) was answered 503 and waits for its retry. */
async function retryingRun(): Promise<string> {
  receiver = await startLoopbackServer(tasksAnswer((_req, index) => ({ kind: "respond", status: index === 1 ? 503 : 200 })));
  const { resultIds } = await startRun(a, [receiver.url("/hook")], { hmacKey: "task-secret" });
  expect((await a.dispatcher().tick()).failed).toBe(1);
  a.clock.advance(60_000);
  return resultIds[0]!;
}

describe("key rotation with deliveries queued (D29)", () => {
  it("sends a request queued under the old key after reencrypt and the old key's removal", async () => {
    a = await deliveryApp({ keyring: createKeyring({ keys: [k1] }) });
    const resultId = await retryingRun();

    await host(ROTATED).reencrypt();
    const rotated = host({ keys: [k2] });
    expect((await createDispatcher(rotated, { random: () => 0, owner: "rotated" }).tick()).delivered).toBe(1);

    expect(deliveriesTo(receiver.requests)).toHaveLength(2);
    expect(await rowOf(a, resultId)).toMatchObject({ attempt: 2, deliveredAt: expect.any(String) });
    expect((await resultOf(a, resultId)).status).toBe("running");
  });

  it("a host still holding the old keyring reloads it once and keeps delivering after another host re-encrypted", async () => {
    // The keyring file host A reads; the operator changes it, host A is not told.
    let file: KeyringOptions = { keys: [k1] };
    a = await deliveryApp({ keyring: createKeyring({ ...file, source: () => file }) });
    const resultId = await retryingRun();

    file = ROTATED;
    await host(ROTATED).reencrypt();
    expect((await a.dispatcher().tick()).delivered).toBe(1);

    expect(deliveriesTo(receiver.requests)).toHaveLength(2);
    expect(await rowOf(a, resultId)).toMatchObject({ attempt: 2, deliveredAt: expect.any(String), lastError: expect.not.stringMatching(/opened/) });
    expect(a.runplane.keyring.activeKeyId).toBe("k2");
  });
});
