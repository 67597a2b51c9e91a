import { mkdirSync, writeFileSync, existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStorage } from "../../adapters/sqlite/index.js";
import { seedDemo } from "../../examples/server/demo.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { preflight, runChecks } from "../../examples/server/checks.js";
import { parse } from "../../src/cli/args.js";
import { BASE_ENV, run, serve, scratchDirs } from "./helpers.js";

const { fresh, made } = scratchDirs();

describe("runplane doctor", () => {
  it("beside the running server reports its port as that server's, not as taken", async () => {
    const dir = fresh();
    const s = await serve(dir);
    try {
      const result = await run(["doctor", "--data-dir", dir, "--port", String(s.port), "--integration-port", "0"]);
      expect(result.stdout).toMatch(new RegExp(`127\\.0\\.0\\.1:${s.port} is taken, by the runplane server running on this data directory \\(pid \\d+\\)`));
      expect(result.code, result.stdout + result.stderr).toBe(0);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  // Run beside a server without its PORT, doctor used to check the default 8080 ("is free"), a
  // port that server does not use: the server records where it listens in its data directory's
  // lock, and doctor checks those ports instead.
  it("without PORT or INTEGRATION_PORT reads the running server's ports from its lock", async () => {
    const dir = fresh();
    const s = await serve(dir);
    try {
      const result = await run(["doctor", "--data-dir", dir]);
      const portLine = result.stdout.split("\n").find((l) => l.startsWith("ok   port"));
      expect(portLine).toMatch(new RegExp(`127\\.0\\.0\\.1:${s.port} is taken, by the runplane server running on this data directory \\(pid \\d+; its port from server\\.lock\\) \\(PORT\\)`));
      expect(portLine).toMatch(/127\.0\.0\.1:\d+ is taken, by the runplane server running on this data directory \(pid \d+; its port from server\.lock\) \(INTEGRATION_PORT\)/);
      expect(portLine).not.toContain(":8080");
      expect(result.code, result.stdout + result.stderr).toBe(0);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  it("prints one ok line per check and exits 0 on a healthy setup", async () => {
    const dir = made();
    await run(["migrate", "--data-dir", dir]);
    const result = await run(["doctor", "--data-dir", dir, "--port", "0", "--integration-port", "0"]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines.map((l) => l.split(":")[0]!.replace(/\s+/g, " "))).toEqual(["ok options", "ok data directory", "ok keyring", "ok keys", "ok storage", "ok hosts", "ok port", "ok egress"]);
  });

  it("fails the egress check for an integration URL that does not resolve", async () => {
    const result = await run(["doctor", "--data-dir", fresh(), "--port", "0", "--integration-url", "http://no-such-host.invalid/task"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("FAIL egress: no-such-host.invalid does not resolve: fix INTEGRATION_URL or the DNS\n");
  });

  it("says what to fix, one line each, and exits 1: a bad key, a taken port, a bad option", async () => {
    const dir = fresh();
    const s = await serve(dir);
    // A port another program holds (the server's own port is no fault: see the case above).
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const taken = (other.address() as { port: number }).port;
    writeFileSync(join(dir, "keyring.json"), JSON.stringify({ keys: [{ id: "k1", key: Buffer.alloc(8).toString("base64") }] }));
    const result = await run(["doctor", "--data-dir", dir, "--port", "0", "--integration-port", "0", "--dialect", "klingon"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('FAIL options: RUNPLANE_DIALECT (--dialect) must be "default" or "hcp-terraform" ("hcp-terraform" for real Terraform clients and integrations); got "klingon"\n');
    expect(result.stdout).toMatch(/FAIL keyring: .*keyring\.json: keyring key "k1" must be 32 bytes of base64 .*runplane keygen.*\n/);
    expect(result.stdout).toContain(`lock held by pid ${s.child.pid}`);
    expect(await s.stop()).toBe(0);
    const alone = await run(["doctor", "--data-dir", fresh(), "--port", String(taken), "--integration-port", "0"]);
    other.close();
    expect(alone.stdout).toContain(`FAIL port: PORT (--port): port ${taken} on 127.0.0.1 is taken by another process: stop it, or choose another port (0: any free one)\n`);
    expect(alone.code).toBe(1);
  });

  it("names a port that is not a number, and does not try it", async () => {
    const result = await run(["doctor", "--data-dir", fresh(), "--port", "abc", "--integration-port", "0"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('FAIL options: PORT (--port) must be an integer from 0 to 65535 (0: any free port); got "abc"\n');
    expect(result.stdout).toContain("--   port: not checked: PORT (--port) is not valid (see options)\n");
    expect(result.stdout).not.toContain("NaN");
  });

  it("shows the EGRESS_ALLOW entries the server will allow", async () => {
    const result = await run(["doctor", "--data-dir", fresh(), "--port", "0", "--integration-port", "0"], { EGRESS_ALLOW: "10.1.0.0/16, tasks.internal:443" });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("ok   egress: runplane may reach the bundled integration on 127.0.0.1 and EGRESS_ALLOW 10.1.0.0/16, tasks.internal:443; other private addresses stay refused\n");
  });
});

/**
 * A data directory whose database holds a sensitive variable sealed under a key that its
 * keyring.json no longer has: a keyring replaced by mistake.
 */
async function dataWithReplacedKey(dir: string): Promise<void> {
  mkdirSync(dir, { mode: 0o700 });
  const keys = { keys: [{ id: "k1", key: generateKey() }], active: "k1" };
  const runplane = createRunplane({ storage: await openSqliteStorage(join(dir, "runplane.db")), keyring: keys, logger: silentLogger });
  await seedDemo(runplane);
  await runplane.variables.create("ws-demo", { key: "secret", value: "s3cret", category: "env", sensitive: true });
  await runplane.close();
  writeFileSync(join(dir, "keyring.json"), JSON.stringify({ keys: [{ id: "k1", key: generateKey() }], active: "k1" }), { mode: 0o600 });
}

describe("runplane doctor fails for each setup runplane serve refuses (one list of checks)", () => {
  const cases: [string, { args?: string[]; env?: Record<string, string>; prepare?: (dir: string) => Promise<void>; check: string; says: string }][] = [
    ["a keyring key that does not open the database's values", { prepare: dataWithReplacedKey, check: "keyring", says: 'keyring.json: cannot decrypt a value sealed with keyring key "k1"' }],
    ["an ADMIN_TOKEN shorter than 16 characters", { env: { ADMIN_TOKEN: "short-token" }, check: "options", says: "ADMIN_TOKEN (--admin-token) must be at least 16 characters; it has 11" }],
    ["an unknown dialect", { args: ["--dialect", "tfc"], check: "options", says: 'RUNPLANE_DIALECT (--dialect) must be "default" or "hcp-terraform"' }],
    ["a port that is not a number", { args: ["--port", "abc"], check: "options", says: 'PORT (--port) must be an integer from 0 to 65535 (0: any free port); got "abc"' }],
    ["a port above 65535", { args: ["--port", "65536"], check: "options", says: 'PORT (--port) must be an integer from 0 to 65535 (0: any free port); got "65536"' }],
    ["a port that is not an integer", { args: ["--integration-port", "1.5"], check: "options", says: 'INTEGRATION_PORT (--integration-port) must be an integer from 0 to 65535 (0: any free port); got "1.5"' }],
    ["a pool size below 2", { env: { DATABASE_POOL_SIZE: "-3" }, check: "options", says: 'DATABASE_POOL_SIZE (--database-pool-size) must be an integer of at least 2 (one connection holds the startup lock); got "-3"' }],
    ["a pool size of 1, which would wait on its own startup lock", { env: { DATABASE_POOL_SIZE: "1" }, check: "options", says: 'DATABASE_POOL_SIZE (--database-pool-size) must be an integer of at least 2 (one connection holds the startup lock); got "1"' }],
    ["a wrong EGRESS_ALLOW entry", { args: ["--egress-allow", "127.0.0.1:9000,10.0.0.0/99"], check: "options", says: 'EGRESS_ALLOW (--egress-allow) entry "10.0.0.0/99" has an invalid prefix length (0-32)' }],
  ];

  // serve and doctor run the one list of checks: each setup through it in process, for both.
  it.each(cases)("%s", async (_, { args = [], env = {}, prepare, check, says }) => {
    const dir = fresh();
    await prepare?.(dir);
    const { env: settings } = parse(["--port", "0", "--integration-port", "0", "--data-dir", dir, ...args], {}, true, { ...BASE_ENV, ...env });
    await expect(preflight(settings)).rejects.toThrow(says);
    // Refused before anything started: a fresh data directory is not even created.
    if (!prepare) expect(existsSync(dir)).toBe(false);
    expect((await runChecks(settings)).find((c) => c.name === check)?.verdict).toStrictEqual({ fix: expect.stringContaining(says) });
  });

  // ...and the commands themselves run it: one setup end to end, as the user meets it.
  it("serve refuses, in one line, and doctor fails, for a keyring that does not open the database", async () => {
    const [, { prepare, check, says }] = cases[0]!;
    const dir = fresh();
    await prepare!(dir);
    const flags = ["--port", "0", "--integration-port", "0", "--data-dir", dir];
    const served = await run(["serve", ...flags]);
    expect(served.code).toBe(1);
    expect(served.stderr).toMatch(/^runplane serve: [^\n]*\n$/);
    expect(served.stderr).toContain(says);
    const doctor = await run(["doctor", ...flags]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout.split("\n").find((line) => line.startsWith(`FAIL ${check}: `))).toContain(says);
  });

  it("a taken INTEGRATION_PORT", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const says = `INTEGRATION_PORT (--integration-port): port ${port} on 127.0.0.1 is taken by another process`;
      const flags = ["--port", "0", "--integration-port", String(port), "--data-dir", fresh()];
      expect((await run(["serve", ...flags])).stderr).toContain(says);
      expect((await run(["doctor", ...flags])).stdout).toContain(`FAIL port: ${says}`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
