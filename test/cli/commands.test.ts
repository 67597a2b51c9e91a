import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS as PG_MIGRATIONS } from "../../adapters/postgres/schema.js";
import { MIGRATIONS as SQLITE_MIGRATIONS } from "../../adapters/sqlite/schema.js";
import { openSqliteStorage } from "../../adapters/sqlite/index.js";
import { seedDemo } from "../../examples/server/demo.js";
import { createKeyring, createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { preflight, runChecks } from "../../examples/server/checks.js";
import { parse } from "../../src/cli/args.js";
import { authorized, BASE_ENV, killAll, run, serve } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "runplane-cli-"));
let n = 0;
const fresh = () => join(root, `d${n++}`);
/** A new, empty data directory, as an operator makes one before `migrate`. */
const made = (): string => {
  const dir = fresh();
  mkdirSync(dir);
  return dir;
};
afterAll(() => {
  killAll();
  rmSync(root, { recursive: true, force: true });
});

describe("runplane keygen", () => {
  it("prints a new 32-byte key, or with --json a keyring the server accepts", async () => {
    const plain = await run(["keygen"]);
    expect(plain.code).toBe(0);
    expect(Buffer.from(plain.stdout.trim(), "base64")).toHaveLength(32);
    const json = await run(["keygen", "--json", "--id", "k2"]);
    const keyring = JSON.parse(json.stdout);
    expect(keyring.active).toBe("k2");
    expect(createKeyring(keyring).activeKeyId).toBe("k2");
    expect(keyring.keys[0].key).not.toBe(plain.stdout.trim());
  });
});

describe("runplane help and version (issue 33.8)", () => {
  it("prints its version", async () => {
    const result = await run(["--version"]);
    expect(result.stdout).toBe(`${JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version}\n`);
    expect(result.code).toBe(0);
  });

  it.each([
    ["migrate", ["--data-dir", "--database-url", "--database-schema"]],
    ["reencrypt", ["--data-dir", "--database-url", "--database-schema", "--keyring"]],
    ["token", ["--data-dir", "--database-url", "--database-schema", "--keyring"]],
  ])("lists only the flags %s takes, and refuses the server's others", async (command, flags) => {
    const help = (await run([command, "--help"])).stdout;
    const listed = [...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]);
    expect(listed).toStrictEqual(flags);
    const refused = await run([command, ...(command === "token" ? ["create"] : []), "--port", "9000"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/unknown flag --port/);
  });
});

describe("runplane migrate (SQLite)", () => {
  it("lists every pending step with --dry-run and creates nothing, then applies them, then has nothing left", async () => {
    const dir = fresh();
    const names = SQLITE_MIGRATIONS.map((m) => m.name);
    const dry = await run(["migrate", "--dry-run", "--data-dir", dir]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(names.map((name) => `pending: ${name}\n`).join(""));
    expect(existsSync(dir)).toBe(false);

    // Issue 33.8: a missing data directory is refused, not made into a database no server uses.
    const missing = await run(["migrate", "--data-dir", dir]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`runplane migrate: data directory ${dir} does not exist: create it (mkdir ${dir}) or point --data-dir (DATA_DIR) at the server's data directory\n`);
    expect(existsSync(dir)).toBe(false);

    mkdirSync(dir);
    const applied = await run(["migrate", "--data-dir", dir]);
    expect(applied.stdout).toBe(names.map((name) => `applied: ${name}\n`).join(""));
    const db = new Database(join(dir, "runplane.db"), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(names.length);
    db.close();
    expect((await run(["migrate", "--dry-run", "--data-dir", dir])).stdout).toBe("schema is up to date: nothing to apply\n");
  });

  it("refuses, in one line, a database a newer runplane migrated further", async () => {
    const dir = made();
    await run(["migrate", "--data-dir", dir]);
    const db = new Database(join(dir, "runplane.db"));
    db.pragma(`user_version = ${SQLITE_MIGRATIONS.length + 1}`);
    db.close();
    const result = await run(["migrate", "--dry-run", "--data-dir", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^runplane migrate: runplane sqlite: database schema is version \d+, this runplane knows \d+: upgrade runplane[^\n]*\n$/);
  });
});

if (await postgresReachable("runplane migrate (PostgreSQL)")) {
  describe("runplane migrate (PostgreSQL)", () => {
    const schema = uniqueSchema("cli");
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    afterAll(async () => {
      await dropSchema(pool, schema);
      await pool.end();
    });

    it("lists the pending steps without creating the schema, then applies them", async () => {
      const flags = ["--database-url", DATABASE_URL, "--database-schema", schema];
      const names = PG_MIGRATIONS.map((m) => m.name);
      const dry = await run(["migrate", "--dry-run", ...flags]);
      expect(dry.stdout).toBe(names.map((name) => `pending: ${name}\n`).join(""));
      const exists = async () => (await pool.query("SELECT to_regnamespace($1) IS NOT NULL AS e", [schema])).rows[0].e as boolean;
      expect(await exists()).toBe(false);
      expect((await run(["migrate", ...flags])).stdout).toBe(names.map((name) => `applied: ${name}\n`).join(""));
      expect(await exists()).toBe(true);
      expect((await run(["migrate", "--dry-run", ...flags])).stdout).toBe("schema is up to date: nothing to apply\n");
    });
  });
}

describe("runplane token create", () => {
  it("prints an owners token that works against a running server, and a team token with --team", async () => {
    const dir = fresh();
    const s = await serve(dir);
    const owners = await run(["token", "create", "--data-dir", dir]);
    expect(owners.code).toBe(0);
    const token = owners.stdout.trim();
    expect(token).toMatch(/^at-/);
    // Owners may create a variable; the devs team (no grants) may not even see the workspace.
    const body = JSON.stringify({ data: { type: "vars", attributes: { key: "k", value: "v", category: "env" } } });
    expect((await fetch(`${s.api}/workspaces/ws-demo/vars`, { method: "POST", headers: authorized(token), body })).status).toBe(201);
    const devs = (await run(["token", "create", "--team", "team-devs", "--data-dir", dir])).stdout.trim();
    expect((await fetch(`${s.api}/workspaces/ws-demo/vars`, { headers: authorized(devs) })).status).toBe(404);
    // The server's own printed token is untouched.
    expect((await fetch(`${s.api}/workspaces/ws-demo/vars`, { headers: authorized(s.token) })).status).toBe(200);
    expect(await s.stop()).toBe(0);
  });

  it("refuses an unknown team in one line, exit 1", async () => {
    const dir = made();
    await run(["migrate", "--data-dir", dir]);
    const result = await run(["token", "create", "--team", "team-nope", "--data-dir", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("runplane token: team team-nope not found in organization demo: pass --team <id> with the id of one of its teams\n");
    expect(result.stdout).toBe("");
  });

  it("says an unknown organization is not found, and which one there is (issue 24.7)", async () => {
    const dir = made();
    await run(["migrate", "--data-dir", dir]);
    const result = await run(["token", "create", "--organization", "nope", "--data-dir", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^runplane token: organization nope not found: the reference server has organization demo \(use --organization demo, or leave it out\); other organizations are created by a program embedding runplane, with directory\.organizations\.create\(\.\.\.\)\n$/);
    expect(result.stdout).toBe("");
  });
});

describe("commands that need a server's data refuse a data directory that does not exist (issue 25)", () => {
  it.each([["token", "create"], ["reencrypt"]])("runplane %s names the folder, says to start serve first, and creates nothing", async (...command) => {
    const dir = fresh();
    const result = await run([...command, "--data-dir", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `runplane ${command[0]}: data directory ${dir} does not exist: start \`runplane serve --data-dir ${dir}\` first (it creates them), or point --data-dir (DATA_DIR) at the server's data directory\n`,
    );
    expect(result.stdout).toBe("");
    expect(existsSync(dir)).toBe(false);
  });

  it("refuses a data directory without a database", async () => {
    const dir = fresh();
    mkdirSync(dir);
    const result = await run(["token", "create", "--data-dir", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`data directory ${dir} holds no runplane database (runplane.db): start \`runplane serve --data-dir ${dir}\` first`);
    expect(existsSync(join(dir, "runplane.db"))).toBe(false);
  });
});

describe("runplane reencrypt", () => {
  it("moves every sealed value to the newly active key", async () => {
    const dir = fresh();
    const s = await serve(dir);
    const body = JSON.stringify({ data: { type: "vars", attributes: { key: "secret", value: "s3cret", category: "env", sensitive: true } } });
    expect((await fetch(`${s.api}/workspaces/ws-demo/vars`, { method: "POST", headers: authorized(s.token), body })).status).toBe(201);
    expect(await s.stop()).toBe(0);

    const file = join(dir, "keyring.json");
    const keyring = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ keys: [...keyring.keys, { id: "k2", key: generateKey() }], active: "k2" }));
    const result = await run(["reencrypt", "--data-dir", dir]);
    expect(result.code).toBe(0);
    // The variable and the two demo tasks' HMAC keys; then what each key seals (D29).
    expect(result.stdout).toBe(
      "re-encrypted 3 values with the active key k2\n  k1: 0 values\n  k2 (active): 3 values (1 variable value, 2 run task HMAC keys)\n",
    );
    const db = new Database(join(dir, "runplane.db"), { readonly: true });
    const sealed = db.prepare("SELECT value FROM variables WHERE sensitive = 1").all() as { value: string }[];
    db.close();
    expect(sealed.map((r) => r.value.split(":")[1])).toEqual(["k2"]);
  });

  it("refuses a keyring whose key under a known id is not the one that sealed the values, changing nothing (issue 33.8)", async () => {
    const dir = fresh();
    const s = await serve(dir);
    expect(await s.stop()).toBe(0);
    const file = join(dir, "keyring.json");
    writeFileSync(file, JSON.stringify({ keys: [{ id: "k1", key: generateKey() }, { id: "k2", key: generateKey() }], active: "k2" }));
    const before = readFileSync(join(dir, "runplane.db"));
    const result = await run(["reencrypt", "--data-dir", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^runplane reencrypt: the keyring does not open the database's sealed values: .*k1/);
    expect(result.stdout).toBe("");
    expect(readFileSync(join(dir, "runplane.db")).equals(before)).toBe(true);
  });
});

describe("runplane doctor", () => {
  it("beside the running server reports its port as that server's, not as taken (issue 33.8)", async () => {
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

  it("names a port that is not a number, and does not try it (issue 24.7)", async () => {
    const result = await run(["doctor", "--data-dir", fresh(), "--port", "abc", "--integration-port", "0"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('FAIL options: PORT (--port) must be an integer from 0 to 65535 (0: any free port); got "abc"\n');
    expect(result.stdout).toContain("--   port: not checked: PORT (--port) is not valid (see options)\n");
    expect(result.stdout).not.toContain("NaN");
  });

  it("shows the EGRESS_ALLOW entries the server will allow", async () => {
    const result = await run(["doctor", "--data-dir", fresh(), "--port", "0", "--integration-port", "0"], { EGRESS_ALLOW: "10.0.0.0/8, tasks.internal:443" });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("ok   egress: runplane may reach the bundled integration on 127.0.0.1 and EGRESS_ALLOW 10.0.0.0/8, tasks.internal:443; other private addresses stay refused\n");
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

describe("runplane doctor fails for each setup runplane serve refuses (issue 24.7: one list of checks)", () => {
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

describe("runplane", () => {
  it("names an unknown command and prints the usage, exit 2", async () => {
    const result = await run(["frobnicate"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^runplane: unknown command frobnicate\nusage: runplane <command>/);
  });

  it("reports an unknown flag in one line, exit 1, with the flag it is closest to", async () => {
    const result = await run(["keygen", "--port", "1"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("runplane keygen: unknown flag --port (--help lists the flags)\n");
    expect((await run(["serve", "--dialcet", "hcp-terraform"])).stderr).toBe("runplane serve: unknown flag --dialcet: did you mean --dialect? (--help lists the flags)\n");
  });
});
