import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS as PG_MIGRATIONS } from "../../adapters/postgres/schema.js";
import { MIGRATIONS as SQLITE_MIGRATIONS } from "../../adapters/sqlite/schema.js";
import { createKeyring, generateKey } from "../../src/index.js";
import { DATABASE_URL, dropSchema, postgresReachable, uniqueSchema } from "../helpers/postgres.js";
import { authorized, killAll, run, serve } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "runplane-cli-"));
let n = 0;
const fresh = () => join(root, `d${n++}`);
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

describe("runplane migrate (SQLite)", () => {
  it("lists every pending step with --dry-run and creates nothing, then applies them, then has nothing left", async () => {
    const dir = fresh();
    const names = SQLITE_MIGRATIONS.map((m) => m.name);
    const dry = await run(["migrate", "--dry-run", "--data-dir", dir]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(names.map((name) => `pending: ${name}\n`).join(""));
    expect(existsSync(dir)).toBe(false);

    const applied = await run(["migrate", "--data-dir", dir]);
    expect(applied.stdout).toBe(names.map((name) => `applied: ${name}\n`).join(""));
    const db = new Database(join(dir, "runplane.db"), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(names.length);
    db.close();
    expect((await run(["migrate", "--dry-run", "--data-dir", dir])).stdout).toBe("schema is up to date: nothing to apply\n");
  });

  it("refuses, in one line, a database a newer runplane migrated further", async () => {
    const dir = fresh();
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
    const result = await run(["token", "create", "--team", "team-nope", "--data-dir", fresh()]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("runplane token: team team-nope not found in organization demo\n");
    expect(result.stdout).toBe("");
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
    // The variable and the two demo tasks' HMAC keys.
    expect(result.stdout).toBe("re-encrypted 3 values with the active key\n");
    const db = new Database(join(dir, "runplane.db"), { readonly: true });
    const sealed = db.prepare("SELECT value FROM variables WHERE sensitive = 1").all() as { value: string }[];
    db.close();
    expect(sealed.map((r) => r.value.split(":")[1])).toEqual(["k2"]);
  });
});

describe("runplane doctor", () => {
  it("prints one ok line per check and exits 0 on a healthy setup", async () => {
    const dir = fresh();
    await run(["migrate", "--data-dir", dir]);
    const result = await run(["doctor", "--data-dir", dir, "--port", "0"]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines.map((l) => l.split(":")[0]!.replace(/\s+/g, " "))).toEqual(["ok options", "ok data directory", "ok keyring", "ok storage", "ok port", "ok egress"]);
  });

  it("fails the egress check for an integration URL that does not resolve", async () => {
    const result = await run(["doctor", "--data-dir", fresh(), "--port", "0", "--integration-url", "http://no-such-host.invalid/task"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("FAIL egress: no-such-host.invalid does not resolve: fix INTEGRATION_URL or the DNS\n");
  });

  it("says what to fix, one line each, and exits 1: a bad key, a taken port, a bad option", async () => {
    const dir = fresh();
    const s = await serve(dir);
    writeFileSync(join(dir, "keyring.json"), JSON.stringify({ keys: [{ id: "k1", key: Buffer.alloc(8).toString("base64") }] }));
    const result = await run(["doctor", "--data-dir", dir, "--port", String(s.port), "--dialect", "klingon"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("FAIL options: RUNPLANE_DIALECT must be hcp-terraform or default\n");
    expect(result.stdout).toMatch(/FAIL keyring: keyring key "k1" must be 32 bytes of base64 .*: fix .*keyring\.json \(`runplane keygen --json` prints a valid one\)\n/);
    expect(result.stdout).toContain(`FAIL port: port ${s.port} on 127.0.0.1 is taken by another process`);
    expect(result.stdout).toContain(`lock held by pid ${s.child.pid}`);
    expect(await s.stop()).toBe(0);
  });
});

describe("runplane", () => {
  it("names an unknown command and prints the usage, exit 2", async () => {
    const result = await run(["frobnicate"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^runplane: unknown command frobnicate\nusage: runplane <command>/);
  });

  it("reports an unknown flag in one line, exit 1", async () => {
    const result = await run(["keygen", "--port", "1"]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/^runplane keygen: Unknown option '--port'/);
  });
});
