import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createDispatcher, type DispatcherHost, type Logger } from "../../src/index.js";
import type { Storage, StopListening } from "../../src/storage/types.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { deliveryApp, resultOf, startRun, tasksAnswer, type DeliveryApp } from "./support.js";

// Decision D27: a dispatcher subscribes to the storage's wake-ups (`Storage.listen`) while it runs,
// so rows another process enqueued go out at once instead of at the next poll. The host below has
// no `runTasks.on`, so the storage's wake-ups are the only thing that can wake it between polls.

let receiver: LoopbackServer;
let a: DeliveryApp;
afterEach(async () => {
  await a?.close();
  await receiver?.close();
});

/** `Storage.listen` under the test's control: `wake()` reaches every subscriber; `open()` lets subscriptions resolve. */
function controlledWakeups(options: { fail?: boolean } = {}) {
  const subscribers = new Set<() => void>();
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const state = { subscribed: 0, stopped: 0 };
  const listen = async (onWake: () => void): Promise<StopListening> => {
    await opened;
    if (options.fail) throw Object.assign(new Error("connect ECONNREFUSED"), { name: "ConnectError" });
    subscribers.add(onWake);
    state.subscribed++;
    return async () => {
      subscribers.delete(onWake);
      state.stopped++;
    };
  };
  return { listen, open, state, wake: () => subscribers.forEach((onWake) => onWake()), subscribers };
}

/** A dispatcher host without `runTasks.on`: a stage start through the runplane does not wake it. */
const withoutEvents = (app: DeliveryApp): DispatcherHost => ({
  runTasks: { deliveries: app.runplane.runTasks.deliveries, settings: app.runplane.runTasks.settings },
  transport: app.runplane.transport,
});

async function world(wakeups: ReturnType<typeof controlledWakeups>, logger?: Logger) {
  receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
  const storage: Storage = Object.assign(createMemoryStorage(), { listen: wakeups.listen });
  a = await deliveryApp({ storage, ...(logger ? { logger } : {}) });
  return createDispatcher(withoutEvents(a), { random: () => 0, owner: "woken", pollIntervalMs: 60_000 });
}

const running = async (ids: string[]) => {
  for (const id of ids) expect((await resultOf(a, id)).status).toBe("running");
};

describe("dispatcher: wake-ups from the storage", () => {
  it("claims at once on a wake-up although its next poll is a minute away, and stops listening on stop()", async () => {
    const wakeups = controlledWakeups();
    const dispatcher = await world(wakeups);
    wakeups.open();
    dispatcher.start();
    await vi.waitFor(() => expect(wakeups.state.subscribed).toBe(1));
    // Let the first pass and the catch-up pass find nothing.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { resultIds } = await startRun(a, [receiver.url("/1"), receiver.url("/2")]);
    expect((await resultOf(a, resultIds[0]!)).status).toBe("pending");

    wakeups.wake();
    await vi.waitFor(() => running(resultIds), { timeout: 1_000, interval: 5 });
    await dispatcher.stop();
    expect(wakeups.state.stopped).toBe(1);
    expect(wakeups.subscribers.size).toBe(0);
  });

  it("runs a catch-up pass once listening, for rows enqueued before the subscription took hold", async () => {
    const wakeups = controlledWakeups();
    const dispatcher = await world(wakeups);
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { resultIds } = await startRun(a, [receiver.url("/1")]);

    wakeups.open();
    await vi.waitFor(() => running(resultIds), { timeout: 1_000, interval: 5 });
    await dispatcher.stop();
    expect(wakeups.state).toStrictEqual({ subscribed: 1, stopped: 1 });
  });

  it("keeps polling, and says so once, when the storage cannot listen", async () => {
    const wakeups = controlledWakeups({ fail: true });
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message) => void warnings.push(message) };
    const dispatcher = await world(wakeups, logger);
    wakeups.open();
    const { resultIds } = await startRun(a, [receiver.url("/1")]);
    dispatcher.start();
    await vi.waitFor(() => running(resultIds), { timeout: 1_000, interval: 5 });
    await dispatcher.stop();
    expect(warnings).toStrictEqual(["run task dispatcher hears no wake-ups from other processes; polling only"]);
  });
});
