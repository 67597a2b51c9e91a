import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane, generateKey, silentLogger, type Logger } from "../../src/index.js";
import type { HostRecord } from "../../src/schemas/hosts.js";
import type { Storage } from "../../src/storage/types.js";

// Decision D29a: each runplane instance records the keys it seals with and when it was last alive.
// The clock and the interval timer are the test's: nothing here waits on wall time.

const k1 = { id: "k1", key: generateKey() };
const k2 = { id: "k2", key: generateKey() };
const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const flush = () => new Promise((resolve) => setImmediate(resolve));

function harness(options: { storage?: Storage; logger?: Logger } = {}) {
  const storage = options.storage ?? createMemoryStorage();
  let now = T0;
  const timer = { intervalMs: 0, beat: null as (() => void) | null, cancelled: false };
  const runplane = createRunplane({
    storage,
    keyring: { keys: [k1, k2], active: "k1" },
    logger: options.logger ?? silentLogger,
    clock: () => new Date(now),
    host: {
      name: "web-1",
      schedule: (intervalMs, beat) => {
        Object.assign(timer, { intervalMs, beat });
        return () => void (timer.cancelled = true);
      },
    },
  });
  return {
    storage,
    runplane,
    timer,
    advance: (ms: number) => void (now += ms),
    tick: async () => {
      timer.beat!();
      await flush();
    },
    hosts: () => storage.hosts.list(),
  };
}

describe("host heartbeat (D29a)", () => {
  it("records the host at creation: name, pid, keys, the key it seals with, the interval and the time", async () => {
    const h = harness();
    await flush();
    const [host] = await h.hosts();
    expect(host).toStrictEqual({
      id: expect.stringMatching(/^host-[0-9A-Za-z]{16}$/),
      name: "web-1",
      pid: process.pid,
      activeKeyId: "k1",
      keyIds: ["k1", "k2"],
      sealingKeyIds: ["k1"],
      intervalMs: 15_000,
      startedAt: new Date(T0).toISOString(),
      lastSeenAt: new Date(T0).toISOString(),
    } satisfies HostRecord);
    expect(h.timer.intervalMs).toBe(15_000);
    await h.runplane.close();
  });

  it("beats every interval, moving lastSeenAt with the clock", async () => {
    const h = harness();
    await flush();
    h.advance(15_000);
    await h.tick();
    expect((await h.hosts())[0]!.lastSeenAt).toBe(new Date(T0 + 15_000).toISOString());
    await h.runplane.close();
  });

  it("records a reload's new keys at once, without waiting for the next interval", async () => {
    const h = harness();
    await flush();
    h.advance(1_000);
    await h.runplane.keyring.reload({ keys: [k2, k1], active: "k2" });
    expect((await h.hosts())[0]).toMatchObject({ activeKeyId: "k2", keyIds: ["k2", "k1"], sealingKeyIds: ["k2"], lastSeenAt: new Date(T0 + 1_000).toISOString() });
    await h.runplane.close();
  });

  it("records both keys before the keyring switches, so no retirement slips in between", async () => {
    const inner = createMemoryStorage();
    const seen: { active: string; sealing: string[] }[] = [];
    let runplane: { keyring: { activeKeyId: string } } | undefined;
    const hosts = { ...inner.hosts, beat: async (r: HostRecord) => (seen.push({ active: runplane!.keyring.activeKeyId, sealing: r.sealingKeyIds }), inner.hosts.beat(r)) };
    const h = harness({ storage: { ...inner, hosts } });
    runplane = h.runplane;
    await flush();
    await h.runplane.keyring.reload({ keys: [k1, k2], active: "k2" });
    expect(seen).toStrictEqual([
      { active: "k1", sealing: ["k1"] },
      { active: "k1", sealing: ["k1", "k2"] },
      { active: "k2", sealing: ["k2"] },
    ]);
    await h.runplane.close();
  });

  it("refuses a switch it cannot record, keeping the current keys", async () => {
    const inner = createMemoryStorage();
    let failing = false;
    const hosts = { ...inner.hosts, beat: async (r: HostRecord) => (failing ? Promise.reject(new Error("connection refused")) : inner.hosts.beat(r)) };
    const h = harness({ storage: { ...inner, hosts } });
    await flush();
    failing = true;
    await expect(h.runplane.keyring.reload({ keys: [k1, k2], active: "k2" })).rejects.toThrow(
      "could not record in storage that this host switches to k2 (connection refused): keeping the current keys",
    );
    expect(h.runplane.keyring.activeKeyId).toBe("k1");
    failing = false;
    await h.tick();
    expect((await h.hosts())[0]!.sealingKeyIds).toStrictEqual(["k1"]);
    await h.runplane.close();
  });

  it("logs a failed beat and records the host again at the next one", async () => {
    const inner = createMemoryStorage();
    let failing = true;
    const warnings: string[] = [];
    const hosts = { ...inner.hosts, beat: async (r: HostRecord) => (failing ? Promise.reject(new Error("connection refused")) : inner.hosts.beat(r)) };
    const h = harness({ storage: { ...inner, hosts }, logger: { ...silentLogger, warn: (message: string) => void warnings.push(message) } });
    await flush();
    expect(warnings).toStrictEqual(["host heartbeat failed"]);
    expect(await h.hosts()).toStrictEqual([]);
    failing = false;
    await h.tick();
    expect((await h.hosts()).length).toBe(1);
    await h.runplane.close();
  });

  it("never overlaps two beats of one host", async () => {
    const inner = createMemoryStorage();
    let running = 0;
    let most = 0;
    const hosts = {
      ...inner.hosts,
      beat: async (r: HostRecord) => {
        most = Math.max(most, ++running);
        await flush();
        running--;
        return inner.hosts.beat(r);
      },
    };
    const h = harness({ storage: { ...inner, hosts } });
    h.timer.beat!();
    h.timer.beat!();
    await h.runplane.keyring.reload({ keys: [k1, k2], active: "k2" });
    expect(most).toBe(1);
    await h.runplane.close();
  });

  it("removes the host at close, stops the timer, and a beat after close writes nothing", async () => {
    const h = harness();
    await flush();
    await h.runplane.close();
    expect(h.timer.cancelled).toBe(true);
    expect(await h.storage.hosts.list()).toStrictEqual([]);
    await h.tick();
    expect(await h.storage.hosts.list()).toStrictEqual([]);
  });

  it("removes at start the hosts silent for more than a day, keeping the others", async () => {
    const storage = createMemoryStorage();
    const old = { id: "host-old", name: "gone", pid: 1, activeKeyId: "k1", keyIds: ["k1"], sealingKeyIds: ["k1"], intervalMs: 15_000, startedAt: "2025-12-30T00:00:00.000Z" };
    await storage.hosts.beat({ ...old, lastSeenAt: new Date(T0 - 86_400_001).toISOString() });
    await storage.hosts.beat({ ...old, id: "host-recent", lastSeenAt: new Date(T0 - 86_400_000).toISOString() });
    const h = harness({ storage });
    await flush();
    expect((await storage.hosts.list()).map((r) => r.id).filter((id) => id.startsWith("host-r") || id === "host-old")).toStrictEqual(["host-recent"]);
    await h.runplane.close();
  });

  it("records nothing with host: false", async () => {
    const storage = createMemoryStorage();
    const runplane = createRunplane({ storage, keyring: { keys: [k1] }, logger: silentLogger, host: false });
    await flush();
    await runplane.keyring.reload({ keys: [k1, k2], active: "k2" });
    expect(await storage.hosts.list()).toStrictEqual([]);
    await runplane.close();
  });
});
