import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { PgPoolClientLike, PgPoolLike } from "../../adapters/postgres/driver.js";
import { createNotificationHub, deliveryWakeups, type RetryTimer } from "../../adapters/postgres/notify.js";

// Decision D27: the LISTEN connection's reconnect back-off (100 ms doubling to 5 s)
// starts again at 100 ms once a reconnect succeeds, so one long outage does not slow every later
// one. A fake pool and a timer the test fires by hand: no database, no real waits.

/** A pool whose connections the test can break, and whose `connect` fails while it is `down`. */
function fakePool() {
  const clients: (EventEmitter & PgPoolClientLike)[] = [];
  const state = { down: false };
  const pool = {
    connect: async () => {
      if (state.down) throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
      const client = Object.assign(new EventEmitter(), {
        query: async () => ({ rows: [], rowCount: 0 }),
        release: () => undefined,
      }) as EventEmitter & PgPoolClientLike;
      clients.push(client);
      return client;
    },
  } as unknown as PgPoolLike;
  /** The server drops the current connection. */
  const dropConnection = () => clients.at(-1)!.emit("error", new Error("terminating connection due to administrator command"));
  return { pool, state, dropConnection };
}

/** Records each wait the hub asks for; `fire` runs the pending one and waits for the next request. */
function manualTimer() {
  const delays: number[] = [];
  let pending: (() => void) | null = null;
  const timer: RetryTimer = {
    set: (run, ms) => (delays.push(ms), (pending = run), { ms }),
    clear: () => void (pending = null),
  };
  const waitForRequest = async (count: number): Promise<void> => {
    for (let turns = 0; delays.length < count; turns++) {
      if (turns > 100) throw new Error(`expected ${count} reconnect waits, saw ${delays.length}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const fire = (): void => {
    const run = pending;
    pending = null;
    run?.();
  };
  return { timer, delays, waitForRequest, fire };
}

describe("postgres notifications: reconnect back-off", () => {
  it("doubles the wait to 5 s through an outage and starts again at 100 ms once it has reconnected", async () => {
    const { pool, state, dropConnection } = fakePool();
    const t = manualTimer();
    const hub = createNotificationHub(pool, t.timer);
    let wakes = 0;
    await hub.subscribe(deliveryWakeups("runplane", () => wakes++));

    state.down = true;
    dropConnection();
    await t.waitForRequest(1);
    for (let n = 2; n <= 8; n++) {
      t.fire();
      await t.waitForRequest(n);
    }
    expect(t.delays).toStrictEqual([100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000]);

    state.down = false;
    t.fire();
    for (let turns = 0; wakes === 0 && turns < 100; turns++) await new Promise((resolve) => setImmediate(resolve));
    expect(wakes).toBe(1);

    // A later, short outage: the first retry comes after 100 ms again, not 5 s.
    dropConnection();
    await t.waitForRequest(9);
    expect(t.delays.at(-1)).toBe(100);
    await hub.close();
  });
});
