import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createDispatcher, type DispatcherHost, type Logger } from "../../src/index.js";
import type { Storage, StopListening } from "../../src/storage/types.js";
import { firstPassOver } from "../helpers/dispatcher-passes.js";
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

/** Counts the run task requests the receiver answers; `reached(n)` resolves once `n` have come. */
function countArrivals() {
  let count = 0;
  let waiting: { n: number; resolve(): void }[] = [];
  return {
    arrive(): void {
      count++;
      waiting = waiting.filter((w) => (w.n <= count ? (w.resolve(), false) : true));
    },
    reached: (n: number) => new Promise<void>((resolve) => (count >= n ? resolve() : void waiting.push({ n, resolve }))),
  };
}
let arrivals: ReturnType<typeof countArrivals>;

/**
 * A dispatcher over memory storage with controlled wake-ups that polls once a minute, longer than
 * a test may take: between polls only a wake-up (or a pass it runs at start) moves it. `claimed`
 * waits for its claims, so a test can tell when a start-up pass is over.
 */
async function world(wakeups: ReturnType<typeof controlledWakeups>, logger?: Logger) {
  const counter = (arrivals = countArrivals());
  receiver = await startLoopbackServer(tasksAnswer(() => (counter.arrive(), { kind: "respond", status: 200 })));
  const storage: Storage = Object.assign(createMemoryStorage(), { listen: wakeups.listen });
  a = await deliveryApp({ storage, ...(logger ? { logger } : {}) });
  const claims = vi.spyOn(a.runplane.runTasks.deliveries, "claim");
  const dispatcher = createDispatcher(withoutEvents(a), { random: () => 0, owner: "woken", pollIntervalMs: 60_000 });
  /** Resolves once `n` claims have been answered (a bounded wait for a pass known to be under way). */
  const claimed = (n: number) => vi.waitFor(() => expect(claims.mock.settledResults.length).toBeGreaterThanOrEqual(n), { timeout: 5_000, interval: 5 });
  return { dispatcher, claimed };
}

/** The results' requests were answered, and once the dispatcher stopped (recording them), each result is running. */
const running = async (ids: string[]) => {
  for (const id of ids) expect((await resultOf(a, id)).status).toBe("running");
};

describe("dispatcher: wake-ups from the storage", () => {
  it("claims at once on a wake-up although its next poll is a minute away, and stops listening on stop()", async () => {
    const wakeups = controlledWakeups();
    const { dispatcher, claimed } = await world(wakeups);
    const firstPass = firstPassOver(a.runplane.runTasks.deliveries);
    dispatcher.start();
    // One start-up pass at a time, each over before the next and before the stage starts: the
    // first pass, then the catch-up pass once listening (one claim, nothing else to do).
    await firstPass;
    wakeups.open();
    await claimed(2);
    expect(wakeups.state.subscribed).toBe(1);
    const { resultIds } = await startRun(a, [receiver.url("/1"), receiver.url("/2")]);
    expect((await resultOf(a, resultIds[0]!)).status).toBe("pending");

    wakeups.wake();
    await arrivals.reached(2);
    await dispatcher.stop();
    await running(resultIds);
    expect(wakeups.state.stopped).toBe(1);
    expect(wakeups.subscribers.size).toBe(0);
  });

  it("runs a catch-up pass once listening, for rows enqueued before the subscription took hold", async () => {
    const wakeups = controlledWakeups();
    const { dispatcher } = await world(wakeups);
    const firstPass = firstPassOver(a.runplane.runTasks.deliveries);
    dispatcher.start();
    // The first pass is over and found nothing; the subscription is still pending.
    await firstPass;
    const { resultIds } = await startRun(a, [receiver.url("/1")]);
    expect(wakeups.state.subscribed).toBe(0);

    wakeups.open();
    await arrivals.reached(1);
    await dispatcher.stop();
    await running(resultIds);
    expect(wakeups.state).toStrictEqual({ subscribed: 1, stopped: 1 });
  });

  it("keeps polling, and says so once, when the storage cannot listen", async () => {
    const wakeups = controlledWakeups({ fail: true });
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, error() {}, warn: (message) => void warnings.push(message) };
    const { dispatcher } = await world(wakeups, logger);
    wakeups.open();
    const { resultIds } = await startRun(a, [receiver.url("/1")]);
    dispatcher.start();
    await arrivals.reached(1);
    await dispatcher.stop();
    await running(resultIds);
    expect(warnings).toStrictEqual(["run task dispatcher hears no wake-ups from other processes; polling only"]);
  });
});
