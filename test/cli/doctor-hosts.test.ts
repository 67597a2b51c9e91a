import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { openSqliteStorage } from "../../adapters/sqlite/index.js";
import { hostsNote } from "../../examples/server/check-hosts.js";
import { doctor } from "../../src/cli/doctor.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import type { HostRecord } from "../../src/schemas/hosts.js";

// Decision D29a: `runplane doctor` lists the hosts that recorded themselves in the
// database, one line each with the key it seals with.

const root = mkdtempSync(join(tmpdir(), "runplane-doctor-hosts-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

const k1 = { id: "k1", key: generateKey() };
const k2 = { id: "k2", key: generateKey() };
const NOW = new Date("2026-01-01T12:00:00.000Z");
const record = (overrides: Partial<HostRecord>): HostRecord => ({
  id: "host-a",
  name: "web-1",
  pid: 42,
  activeKeyId: "k2",
  keyIds: ["k1", "k2"],
  sealingKeyIds: ["k2"],
  intervalMs: 15_000,
  startedAt: "2026-01-01T11:00:00.000Z",
  lastSeenAt: "2026-01-01T11:59:55.000Z",
  ...overrides,
});

describe("runplane doctor: hosts (D29a)", () => {
  it("lists each host on its own line with its active key, live ones first, and says which are silent", async () => {
    const dir = join(root, "two-hosts");
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, "keyring.json"), JSON.stringify({ keys: [k1, k2], active: "k2" }), { mode: 0o600 });
    const host = createRunplane({ storage: await openSqliteStorage(join(dir, "runplane.db")), keyring: { keys: [k1, k2], active: "k1" }, logger: silentLogger, host: { name: "web-2" } });
    await new Promise((resolve) => setImmediate(resolve));
    const crashed = await openSqliteStorage(join(dir, "runplane.db"));
    const tenMinutesAgo = new Date(Date.now() - 600_000).toISOString();
    await crashed.hosts.beat(record({ id: "host-crashed", name: "web-9", pid: 99, activeKeyId: "k1", keyIds: ["k1"], sealingKeyIds: ["k1"], lastSeenAt: tenMinutesAgo }));
    await crashed.close();
    vi.stubEnv("DATABASE_URL", "");
    vi.stubEnv("RUNPLANE_KEYRING", "");

    const lines: string[] = [];
    await doctor(["--data-dir", dir, "--port", "0", "--integration-port", "0"], (line) => lines.push(...line.split("\n")));
    const at = lines.findIndex((l) => l.startsWith("ok   hosts: "));
    expect(lines[at]).toBe("ok   hosts: 1 live, 1 silent (stopped without removing their record, or cannot reach the database)");
    expect(lines[at + 1]).toMatch(new RegExp(`^ {7}web-2 pid ${process.pid} \\(host-\\w{16}\\): active k1, keys k1, k2, last seen \\d+ s ago$`));
    expect(lines[at + 2]).toBe("       web-9 pid 99 (host-crashed): active k1, keys k1, last seen 10 min ago, silent (not live)");
    expect(lines[at + 3]).toMatch(/^ok   port: /);

    // A host that stops cleanly removes its record.
    await host.close();
    const after: string[] = [];
    await doctor(["--data-dir", dir, "--port", "0", "--integration-port", "0"], (line) => after.push(line));
    expect(after.find((l) => l.startsWith("ok   hosts: "))).not.toContain("web-2");
  });

  it("says when no host is running, and marks a host that is switching keys", () => {
    expect(hostsNote([], NOW)).toBe("none running (no host has recorded itself in the database)");
    expect(hostsNote([record({ activeKeyId: "k2", sealingKeyIds: ["k2", "k1"] })], NOW)).toBe(
      "1 live\n       web-1 pid 42 (host-a): active k2, switching to k1, keys k1, k2, last seen 5 s ago",
    );
  });
});
