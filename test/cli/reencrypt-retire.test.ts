import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { openSqliteStorage } from "../../adapters/sqlite/index.js";
import { reencrypt } from "../../src/cli/reencrypt.js";
import { createRunplane, generateKey, silentLogger, type KeyringOptions } from "../../src/index.js";
import type { Storage } from "../../src/storage/types.js";
import { answering200 } from "../helpers/app.js";

// Decision D29: `runplane reencrypt --retire <key id>` removes a key from keyring.json only once it
// seals nothing. A host that has not made the new key active yet still seals with the old one, also
// while reencrypt runs: the value it writes then is the one the refusal protects.

/** What a host that still seals with the old key writes while `reencrypt` walks the stored values. */
const hooks = vi.hoisted(() => ({ whileReencrypting: null as ((storage: Storage) => Promise<void>) | null }));
vi.mock("../../src/services/sealing.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/services/sealing.js")>();
  return {
    ...actual,
    reencryptAll: async (ctx: Parameters<typeof actual.reencryptAll>[0]) => {
      const moved = await actual.reencryptAll(ctx);
      await hooks.whileReencrypting?.(ctx.storage);
      return moved;
    },
  };
});

const root = mkdtempSync(join(tmpdir(), "runplane-retire-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  hooks.whileReencrypting = null;
  vi.unstubAllEnvs();
});

const k1 = { id: "k1", key: generateKey() };
const k2 = { id: "k2", key: generateKey() };

/** A server's data directory: workspace ws-1 holding one secret sealed with k1, and keyring.json with k2 made active. */
async function rotatedDataDir(name: string): Promise<string> {
  const dir = join(root, name);
  mkdirSync(dir, { mode: 0o700 });
  const runplane = createRunplane({ storage: await openSqliteStorage(join(dir, "runplane.db")), keyring: { keys: [k1] }, logger: silentLogger, transport: answering200() });
  await runplane.directory.organizations.create({ name: "o" });
  await runplane.directory.projects.create({ id: "prj-1", name: "p", organization: "o" });
  await runplane.directory.workspaces.create({ id: "ws-1", name: "w", organization: "o", projectId: "prj-1" });
  await runplane.variables.create("ws-1", { key: "early", value: "s3cret", category: "env", sensitive: true });
  await runplane.close();
  writeFileSync(join(dir, "keyring.json"), JSON.stringify({ keys: [k1, k2], active: "k2" }), { mode: 0o600 });
  // The server's SQLite file, whatever database the environment of this test names.
  vi.stubEnv("DATABASE_URL", "");
  vi.stubEnv("RUNPLANE_KEYRING", "");
  return dir;
}

describe("runplane reencrypt --retire (D29)", () => {
  it("refuses, keeping the key in keyring.json, while the key still seals a single value", async () => {
    const dir = await rotatedDataDir("one-left");
    const before = readFileSync(join(dir, "keyring.json"), "utf8");
    hooks.whileReencrypting = async (storage) => {
      const stale = createRunplane({ storage, keyring: { keys: [k1] }, logger: silentLogger, transport: answering200() });
      await stale.variables.create("ws-1", { key: "late", value: "written-with-k1", category: "env", sensitive: true });
    };
    const lines: string[] = [];

    expect(await reencrypt(["--data-dir", dir, "--retire", "k1"], (line) => lines.push(line))).toBe(false);
    expect(lines.slice(0, 4)).toStrictEqual([
      "re-encrypted 1 value with the active key k2",
      "  k1: 1 value (1 variable value)",
      "  k2 (active): 1 value (1 variable value)",
      "not retired: k1 still seals 1 value (1 variable value), sealed by a host that does not seal with the new key yet: make it active in every host's keyring, let them reload, and run this again",
    ]);
    // D29a: the stale host recorded that it seals with k1, and is still live.
    expect(lines[4]).toMatch(/^not retired: k1 is the key a live host seals with: .+ pid \d+ \(host-\w{16}\), last seen \d+ s ago, active\. /);
    expect(lines).toHaveLength(5);
    expect(readFileSync(join(dir, "keyring.json"), "utf8")).toBe(before);
    // Both secrets still open with the keyring the hosts read.
    const after = createRunplane({ storage: await openSqliteStorage(join(dir, "runplane.db")), keyring: JSON.parse(before) as KeyringOptions, logger: silentLogger });
    expect((await after.variables.resolveForRun("ws-1")).map((v) => v.value).sort()).toStrictEqual(["s3cret", "written-with-k1"]);
    await after.close();
  });

  it("retires the key once it seals nothing", async () => {
    const dir = await rotatedDataDir("none-left");
    const lines: string[] = [];

    expect(await reencrypt(["--data-dir", dir, "--retire", "k1"], (line) => lines.push(line))).toBe(true);
    expect(lines.at(-1)).toBe(`retired k1: removed from ${join(dir, "keyring.json")}; remove it from every other host's keyring too`);
    expect((JSON.parse(readFileSync(join(dir, "keyring.json"), "utf8")) as KeyringOptions).keys.map((k) => k.id)).toStrictEqual(["k2"]);
  });
});

// Decision D29a: a host still sealing with the key blocks its retirement even when no
// stored value uses the key yet (the defect: its next deliveries and a new secret became unreadable).
describe("runplane reencrypt --retire sees every host (D29a)", () => {
  /** A second host on the server's SQLite file (its beat timer never fires: no wall-time waits). */
  async function secondHost(dir: string) {
    const host = createRunplane({
      storage: await openSqliteStorage(join(dir, "runplane.db")),
      keyring: { keys: [k1, k2], active: "k1" },
      logger: silentLogger,
      transport: answering200(),
      host: { name: "web-2", schedule: () => () => undefined },
    });
    await new Promise((resolve) => setImmediate(resolve));
    return { host };
  }
  const retire = async (dir: string) => {
    const lines: string[] = [];
    const ok = await reencrypt(["--data-dir", dir, "--retire", "k1"], (line) => lines.push(line));
    return { ok, lines };
  };

  it("refuses while a live host seals with the key, naming it; retires once that host has reloaded to another key", async () => {
    const dir = await rotatedDataDir("live-host");
    const before = readFileSync(join(dir, "keyring.json"), "utf8");
    const { host } = await secondHost(dir);

    const first = await retire(dir);
    expect(first.ok).toBe(false);
    expect(first.lines).toContain("  k1: 0 values");
    expect(first.lines.at(-1)).toMatch(
      new RegExp(`^not retired: k1 is the key a live host seals with: web-2 pid ${process.pid} \\(host-\\w{16}\\), last seen \\d+ s ago, active\\. Make another key active in their keyring and let them reload \\(or stop them\\), then run this again$`),
    );
    expect(readFileSync(join(dir, "keyring.json"), "utf8")).toBe(before);

    await host.keyring.reload({ keys: [k1, k2], active: "k2" });
    const done = await retire(dir);
    expect(done.lines.at(-1)).toBe(`retired k1: removed from ${join(dir, "keyring.json")}; remove it from every other host's keyring too`);
    expect(done.ok).toBe(true);
    await host.close();
  });

  it("refuses to re-encrypt while a live host does not hold the active key, naming it, and moves nothing", async () => {
    const dir = await rotatedDataDir("lacking-host");
    // The defect D29a prevents: a host still on {k1} could open nothing reencrypt had moved to k2.
    const behind = createRunplane({
      storage: await openSqliteStorage(join(dir, "runplane.db")),
      keyring: { keys: [k1] },
      logger: silentLogger,
      transport: answering200(),
      host: { name: "web-3", schedule: () => () => undefined },
    });
    await new Promise((resolve) => setImmediate(resolve));
    await expect(reencrypt(["--data-dir", dir], () => undefined)).rejects.toThrow(
      new RegExp(`^not re-encrypted: a live host does not hold the active key k2, so they could not open what it seals: web-3 pid ${process.pid} \\(host-\\w{16}\\), last seen \\d+ s ago\\. Add k2 to every host's keyring`),
    );
    expect((await behind.variables.resolveForRun("ws-1")).map((v) => v.value)).toStrictEqual(["s3cret"]);
    await behind.close();
    const lines: string[] = [];
    expect(await reencrypt(["--data-dir", dir], (line) => lines.push(line))).toBe(true);
    expect(lines[0]).toBe("re-encrypted 1 value with the active key k2");
  });

  it("is not blocked by a host that stopped beating long ago", async () => {
    const dir = await rotatedDataDir("silent-host");
    const storage = await openSqliteStorage(join(dir, "runplane.db"));
    const lastSeenAt = new Date(Date.now() - 10 * 60_000).toISOString();
    await storage.hosts.beat({ id: "host-crashed", name: "web-9", pid: 99, activeKeyId: "k1", keyIds: ["k1"], sealingKeyIds: ["k1"], intervalMs: 15_000, startedAt: lastSeenAt, lastSeenAt });
    await storage.close();

    const { ok, lines } = await retire(dir);
    expect(lines.at(-1)).toMatch(/^retired k1/);
    expect(ok).toBe(true);
  });
});
