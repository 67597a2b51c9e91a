import { afterEach, describe, expect, it, vi } from "vitest";
import { createDispatcher, createKeyring, createRunplane, generateKey, silentLogger, type Runplane } from "../../src/index.js";
import { KEY_WAIT_MS } from "../../src/services/delivery-settlement.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { deliveryApp, loopbackEgress, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// decision D40 (change): a delivery left for a key no live host holds waits visibly: one warning per
// key per minute (not per row), and health() degraded naming the key once it waited `noKeyHolderFor`.

let receiver: LoopbackServer;
let a: DeliveryApp;
let stranger: Runplane | undefined;
afterEach(async () => {
  await stranger?.close();
  await a?.close();
  await receiver?.close();
});

const WARNING = "deliveries wait for a key no live host holds";

describe("deliveries waiting for a key no live host holds (D40)", () => {
  it("are logged once per key, not per row, and degrade health naming the key after noKeyHolderFor", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    // The host that sealed the rows with k1 keeps no host record: as if it had stopped.
    a = await deliveryApp({ host: false });
    await startRun(a, [receiver.url("/a"), receiver.url("/b")]);
    const warn = vi.fn();
    stranger = createRunplane({
      storage: a.storage,
      logger: { ...silentLogger, warn },
      clock: a.clock,
      keyring: createKeyring({ keys: [{ id: "other", key: generateKey() }] }),
      transport: loopbackEgress(),
      health: { noKeyHolderFor: "1m" },
    });
    const dispatcher = createDispatcher(stranger, { random: () => 0 });
    const warnings = () => warn.mock.calls.filter(([message]) => message === WARNING);
    await dispatcher.tick();
    await vi.waitFor(() => expect(warnings()).toHaveLength(1), { timeout: 2_000, interval: 5 });
    expect(warnings()[0]![1]).toMatchObject({ keyId: "k1" });
    expect(await stranger.health()).toMatchObject({ status: "ok" });
    for (let i = 0; i < 7; i++) {
      a.clock.advance(10_000 + KEY_WAIT_MS);
      await dispatcher.tick();
    }
    const health = await stranger.health();
    expect(health).toMatchObject({ status: "degraded", deliveries: "failing" });
    expect(health.reasons).toContainEqual(expect.stringMatching(/^deliveries waiting for key k1: no live host holds it/));
    expect(warnings().length).toBeLessThanOrEqual(3);
  });
});
