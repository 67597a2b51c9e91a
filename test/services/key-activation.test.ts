import { describe, expect, it, vi } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane, generateKey, silentLogger, type KeyringOptions } from "../../src/index.js";
import type { Logger } from "../../src/logger.js";
import type { Storage } from "../../src/storage/types.js";

// decision D40: a key becomes active (sealed with) only once every live host holds it. A host
// reloading a keyring that makes a new key active takes the key at once (phase one) and switches
// when no live host lacks it any more (phase two), so hosts reloading one shared file converge.
// The clock and the beats are the test's: nothing waits on wall time.

const k1 = { id: "k1", key: generateKey() };
const k2 = { id: "k2", key: generateKey() };
const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const flush = () => new Promise((resolve) => setImmediate(resolve));

function host(storage: Storage, name: string, clock: () => Date, keyring: KeyringOptions = { keys: [k1], active: "k1" }, logger: Logger = silentLogger) {
  let beat: (() => void) | null = null;
  const runplane = createRunplane({
    storage,
    keyring,
    logger,
    clock,
    host: { name, schedule: (_ms, b) => ((beat = b), () => undefined) },
  });
  return { runplane, tick: async () => (beat!(), await flush(), await flush()) };
}

function cluster() {
  const storage = createMemoryStorage();
  let now = T0;
  const clock = () => new Date(now);
  return { storage, a: host(storage, "web-a", clock), b: host(storage, "web-b", clock), advance: (ms: number) => void (now += ms) };
}

describe("key activation follows two phases (D40)", () => {
  it("holds a new key at once but keeps sealing with the old one while a live host lacks it, naming that host", async () => {
    const { a, b } = cluster();
    await flush();
    const reload = await a.runplane.keyring.reload({ keys: [k1, k2], active: "k2" });
    expect(reload).toMatchObject({ changed: true, keyIds: ["k1", "k2"], activeKeyId: "k1", pending: { activeKeyId: "k2", lacking: [expect.stringMatching(/^web-b pid \d+ \(host-/)] } });
    expect(a.runplane.keyring.activeKeyId).toBe("k1");
    expect(a.runplane.keyring.keyIds).toStrictEqual(["k1", "k2"]);
    await a.runplane.close();
    await b.runplane.close();
  });

  it("converges when hosts reload one shared keyring together: each switches once no live host lacks the key", async () => {
    const { a, b } = cluster();
    await flush();
    const shared = { keys: [k1, k2], active: "k2" };
    expect((await a.runplane.keyring.reload(shared)).activeKeyId).toBe("k1");
    // b finds every other live host (a) holding k2: it switches at once.
    expect(await b.runplane.keyring.reload(shared)).toMatchObject({ activeKeyId: "k2" });
    expect((await b.runplane.keyring.reload(shared)).pending).toBeUndefined();
    // a switches on its next beat (or its next reload), without anyone reloading again.
    await a.tick();
    await vi.waitFor(() => expect(a.runplane.keyring.activeKeyId).toBe("k2"), { timeout: 1_000, interval: 5 });
    const hosts = await a.runplane.keyring.reload(shared);
    expect(hosts).toMatchObject({ changed: false, activeKeyId: "k2" });
    await a.runplane.close();
    await b.runplane.close();
  });

  it("does not wait for a host that went silent, and refuses a keyring that drops the active key while a host lacks the new one", async () => {
    const { a, b, advance } = cluster();
    await flush();
    await expect(a.runplane.keyring.reload({ keys: [k2], active: "k2" })).rejects.toThrow(/web-b pid \d+ .* lacks k2: keeping the current keys/);
    expect(a.runplane.keyring.keyIds).toStrictEqual(["k1"]);
    advance(60_000); // b stops beating: no longer live (three intervals of 15 s)
    await a.tick();
    expect(await a.runplane.keyring.reload({ keys: [k1, k2], active: "k2" })).toMatchObject({ activeKeyId: "k2" });
    await a.runplane.close();
    await b.runplane.close();
  });

  it("a host started with an active key a live host lacks seals with a key every live host holds, and switches once all hold the new one", async () => {
    const storage = createMemoryStorage();
    let now = T0;
    const clock = () => new Date(now);
    const a = host(storage, "web-a", clock);
    await flush();
    const warn = vi.fn();
    const b = host(storage, "web-b", clock, { keys: [k1, k2], active: "k2" }, { ...silentLogger, warn });
    await b.runplane.keyring.ready();
    expect(b.runplane.keyring.activeKeyId).toBe("k1");
    expect(b.runplane.keyring.keyIds).toStrictEqual(["k1", "k2"]);
    expect((await storage.hosts.list()).find((h) => h.name === "web-b")?.sealingKeyIds).toStrictEqual(["k1"]);
    expect(warn).toHaveBeenCalledWith("new active key waits for other hosts", expect.objectContaining({ activeKeyId: "k2", lacking: expect.stringMatching(/^web-a pid \d+/) }));
    // a takes k2 (still sealing with k1); b switches on its next beat.
    await a.runplane.keyring.reload({ keys: [k1, k2], active: "k1" });
    now += 1_000;
    await b.tick();
    await vi.waitFor(() => expect(b.runplane.keyring.activeKeyId).toBe("k2"), { timeout: 1_000, interval: 5 });
    await a.runplane.close();
    await b.runplane.close();
  });

  it("a host started with no key every live host holds seals with its own active key, warning which hosts lack it", async () => {
    const storage = createMemoryStorage();
    const clock = () => new Date(T0);
    const a = host(storage, "web-a", clock);
    await flush();
    const warn = vi.fn();
    const b = host(storage, "web-b", clock, { keys: [k2], active: "k2" }, { ...silentLogger, warn });
    await b.runplane.keyring.ready();
    expect(b.runplane.keyring.activeKeyId).toBe("k2");
    expect(warn).toHaveBeenCalledWith("this host seals with a key other live hosts lack", expect.objectContaining({ activeKeyId: "k2", lacking: expect.stringMatching(/^web-a pid \d+/) }));
    await a.runplane.close();
    await b.runplane.close();
  });
});
