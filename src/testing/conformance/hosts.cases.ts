import { describe, expect, it } from "vitest";
import type { HostRecord } from "../../schemas/hosts.js";
import { byId, race, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";

const host = (overrides: Partial<HostRecord> = {}): HostRecord => ({
  id: "host-0000000000000001",
  name: "web-1",
  pid: 4242,
  activeKeyId: "k1",
  keyIds: ["k1", "k2"],
  sealingKeyIds: ["k1"],
  intervalMs: 15_000,
  startedAt: at(0),
  lastSeenAt: at(10),
  ...overrides,
});

/** Decision D29a: `HostStore`, one case per sentence of its JSDoc (`src/storage/hosts-types.ts`). */
export function describeHostCases(ctx: ConformanceContext): void {
  describe("hosts", () => {
    const hosts = () => ctx.storage.hosts;
    const a = host();

    it("lists no host in a new store", async () => {
      expect(await hosts().list()).toStrictEqual([]);
    });

    it("inserts a beat of an unknown id and lists it unchanged", async () => {
      expect(await hosts().beat(a)).toBe(true);
      expect(await hosts().list()).toStrictEqual([a]);
    });

    it("replaces the stored host whole with a later beat", async () => {
      await hosts().beat(a);
      const next = host({ name: "web-1b", pid: 7, activeKeyId: "k2", keyIds: ["k2"], sealingKeyIds: ["k1", "k2"], intervalMs: 5_000, startedAt: at(1), lastSeenAt: at(20) });
      expect(await hosts().beat(next)).toBe(true);
      expect(await hosts().list()).toStrictEqual([next]);
    });

    it("replaces the stored host with a beat of the same instant", async () => {
      await hosts().beat(a);
      expect(await hosts().beat({ ...a, activeKeyId: "k2" })).toBe(true);
      expect(await hosts().list()).toStrictEqual([{ ...a, activeKeyId: "k2" }]);
    });

    it("keeps the stored host against an earlier beat, resolving false", async () => {
      await hosts().beat(a);
      expect(await hosts().beat({ ...a, activeKeyId: "k9", lastSeenAt: at(9) })).toBe(false);
      expect(await hosts().list()).toStrictEqual([a]);
    });

    it("lists every host ordered by id (code units)", async () => {
      const ids = ["host-b", "host-B", "host-a", "host-10", "host-9"];
      for (const id of ids) await hosts().beat(host({ id }));
      expect((await hosts().list()).map((h) => h.id)).toStrictEqual(byId(ids.map((id) => ({ id }))).map((h) => h.id));
    });

    it("keeps the latest of 20 racing beats of one host, whole", async () => {
      const beats = Array.from({ length: 20 }, (_, i) => host({ pid: i, activeKeyId: `k${i}`, lastSeenAt: at(100 + ((i * 7) % 20)) }));
      await race(20, (i) => hosts().beat(beats[i]!));
      const latest = beats.reduce((best, b) => (b.lastSeenAt > best.lastSeenAt ? b : best));
      expect(await hosts().list()).toStrictEqual([latest]);
    });

    it("records each of 20 hosts beating for the first time at once", async () => {
      const results = await race(20, (i) => hosts().beat(host({ id: `host-${String(i).padStart(2, "0")}` })));
      expect(results.every(Boolean)).toBe(true);
      expect((await hosts().list()).length).toBe(20);
    });

    it("removes a host once: true, then false; other hosts stay", async () => {
      const b = host({ id: "host-0000000000000002" });
      await hosts().beat(a);
      await hosts().beat(b);
      expect(await hosts().remove(a.id)).toBe(true);
      expect(await hosts().remove(a.id)).toBe(false);
      expect(await hosts().list()).toStrictEqual([b]);
    });

    it("prunes only hosts last seen before the instant, resolving how many", async () => {
      const ids = ["host-1", "host-2", "host-3", "host-4"];
      const seen = [at(5), at(9), at(10), at(11)];
      for (const [i, id] of ids.entries()) await hosts().beat(host({ id, lastSeenAt: seen[i]! }));
      expect(await hosts().prune(at(10))).toBe(2);
      expect((await hosts().list()).map((h) => h.id)).toStrictEqual(["host-3", "host-4"]);
      expect(await hosts().prune(at(10))).toBe(0);
    });

    it("keeps beats, replacements and removals through a reopen", async () => {
      const b = host({ id: "host-0000000000000002" });
      await hosts().beat(a);
      await hosts().beat(b);
      await hosts().beat({ ...a, activeKeyId: "k2", sealingKeyIds: ["k2"], lastSeenAt: at(30) });
      await hosts().remove(b.id);
      await ctx.reopen();
      expect(await hosts().list()).toStrictEqual([{ ...a, activeKeyId: "k2", sealingKeyIds: ["k2"], lastSeenAt: at(30) }]);
    });
  });
}
