import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { generateKey } from "../../src/index.js";
import { parse } from "../../src/cli/args.js";
import { authorized, run, serve, scratchDirs } from "./helpers.js";

const { fresh, made } = scratchDirs();

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

  it("says an unknown organization is not found, and which one there is", async () => {
    const dir = made();
    await run(["migrate", "--data-dir", dir]);
    const result = await run(["token", "create", "--organization", "nope", "--data-dir", dir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^runplane token: organization nope not found: the reference server has organization demo \(use --organization demo, or leave it out\); other organizations are created by a program embedding runplane, with directory\.organizations\.create\(\.\.\.\)\n$/);
    expect(result.stdout).toBe("");
  });
});

describe("commands that need a server's data refuse a data directory that does not exist", () => {
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

  it("refuses a keyring whose key under a known id is not the one that sealed the values, changing nothing", async () => {
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
