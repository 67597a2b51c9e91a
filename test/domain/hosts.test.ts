import { describe, expect, it } from "vitest";
import { ago, hostLine, hostsSealingWith, isLive } from "../../src/domain/hosts.js";
import type { HostRecord } from "../../src/schemas/hosts.js";

const NOW = new Date("2026-01-01T12:00:00.000Z");
const seenAgo = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const host = (overrides: Partial<HostRecord> = {}): HostRecord => ({
  id: "host-a",
  name: "web-1",
  pid: 42,
  activeKeyId: "k1",
  keyIds: ["k1", "k2"],
  sealingKeyIds: ["k1"],
  intervalMs: 15_000,
  startedAt: seenAgo(60_000),
  lastSeenAt: seenAgo(5_000),
  ...overrides,
});

describe("hosts (D29a)", () => {
  it("counts a host live for three of its own intervals after its last beat, not a millisecond more", () => {
    expect(isLive(host({ lastSeenAt: seenAgo(45_000) }), NOW)).toBe(true);
    expect(isLive(host({ lastSeenAt: seenAgo(45_001) }), NOW)).toBe(false);
    expect(isLive(host({ intervalMs: 60_000, lastSeenAt: seenAgo(180_000) }), NOW)).toBe(true);
  });

  it("finds the live hosts that may seal with a key: active, or being made active", () => {
    const hosts = [
      host({ id: "host-active" }),
      host({ id: "host-switching", activeKeyId: "k2", sealingKeyIds: ["k2", "k1"] }),
      host({ id: "host-done", activeKeyId: "k2", sealingKeyIds: ["k2"] }),
      host({ id: "host-silent", lastSeenAt: seenAgo(46_000) }),
    ];
    expect(hostsSealingWith(hosts, "k1", NOW).map((h) => h.id)).toStrictEqual(["host-active", "host-switching"]);
  });

  it("says how long ago in the largest fitting unit, never negative", () => {
    expect(ago(seenAgo(-3_000), NOW)).toBe("0 s ago");
    expect(ago(seenAgo(119_000), NOW)).toBe("119 s ago");
    expect(ago(seenAgo(180_000), NOW)).toBe("3 min ago");
    expect(ago(seenAgo(3 * 3_600_000), NOW)).toBe("3 h ago");
    expect(ago(seenAgo(4 * 86_400_000), NOW)).toBe("4 d ago");
  });

  it("describes a host on one line: active key, a switch under way, keys, last beat, silence", () => {
    expect(hostLine(host(), NOW)).toBe("web-1 pid 42 (host-a): active k1, keys k1, k2, last seen 5 s ago");
    expect(hostLine(host({ activeKeyId: "k2", sealingKeyIds: ["k2", "k1"] }), NOW)).toBe("web-1 pid 42 (host-a): active k2, switching to k1, keys k1, k2, last seen 5 s ago");
    expect(hostLine(host({ lastSeenAt: seenAgo(600_000) }), NOW)).toBe("web-1 pid 42 (host-a): active k1, keys k1, k2, last seen 10 min ago, silent (not live)");
  });
});
