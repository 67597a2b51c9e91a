import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateKey, type KeyringOptions } from "../../src/index.js";
import { authorized, killAll, run, serve } from "./helpers.js";

// Decision D29: a running reference server reloads its keyring without a restart,
// refuses a keyring that drops a key still in use, and `reencrypt --retire` drops a key only once
// nothing uses it.

const root = mkdtempSync(join(tmpdir(), "runplane-rotation-"));
afterAll(() => {
  killAll();
  rmSync(root, { recursive: true, force: true });
});

/** Writes keyring.json whole (a temporary file renamed over it), as the README says to. */
function writeKeyring(dir: string, keyring: KeyringOptions): void {
  writeFileSync(join(dir, "keyring.tmp"), JSON.stringify(keyring), { mode: 0o600 });
  renameSync(join(dir, "keyring.tmp"), join(dir, "keyring.json"));
}

describe("key rotation on a running reference server (D29)", () => {
  it("reloads keyring.json on change and on SIGHUP, keeps a key still in use, and retires it once unused", async () => {
    const dir = join(root, "a");
    const s = await serve(dir);
    const body = JSON.stringify({ data: { type: "vars", attributes: { key: "secret", value: "s3cret", category: "env", sensitive: true } } });
    expect((await fetch(`${s.api}/workspaces/ws-demo/vars`, { method: "POST", headers: authorized(s.token), body })).status).toBe(201);
    const k1 = (JSON.parse(readFileSync(join(dir, "keyring.json"), "utf8")) as KeyringOptions).keys[0]!;
    const k2 = { id: "k2", key: generateKey() };
    // Each step waits for the server to say what it did (its reload line), however long the file
    // watch takes to notice: the test's timeout is the only bound.
    const waitFor = (pattern: RegExp) => s.printed(pattern);

    writeKeyring(dir, { keys: [k1, k2], active: "k1" });
    await waitFor(/keyring reloaded \([^)]*keyring\.json changed\): keys k1, k2, active k1/);
    // SIGHUP alone reloads too (a file changed in the same second, a mount the poll missed).
    writeKeyring(dir, { keys: [k1, k2], active: "k2" });
    s.child.kill("SIGHUP");
    await waitFor(/keys k1, k2, active k2/);

    // Dropping k1 before re-encrypting is refused: the server keeps k1 and still opens its values.
    writeKeyring(dir, { keys: [k2], active: "k2" });
    await waitFor(/keyring not reloaded \([^)]*\): the new keyring drops a key in use \(k1 still seals 3 values \(1 variable value, 2 run task HMAC keys\)\)/);
    writeKeyring(dir, { keys: [k1, k2], active: "k2" });

    const retired = await run(["reencrypt", "--data-dir", dir, "--retire", "k1"]);
    expect(retired.stdout).toContain("re-encrypted 3 values with the active key k2\n  k1: 0 values\n  k2 (active): 3 values (1 variable value, 2 run task HMAC keys)\n");
    expect(retired.stdout).toContain(`retired k1: removed from ${join(dir, "keyring.json")}`);
    expect(retired.code).toBe(0);
    expect((JSON.parse(readFileSync(join(dir, "keyring.json"), "utf8")) as KeyringOptions).keys.map((k) => k.id)).toEqual(["k2"]);
    await waitFor(/keyring reloaded \([^)]*\): keys k2, active k2/);

    const doctor = await run(["doctor", "--data-dir", dir, "--port", "0", "--integration-port", "0"]);
    expect(doctor.stdout).toContain("ok   keys: k2 (active): 3 values (1 variable value, 2 run task HMAC keys)\n");
    // Sealed and signed with k2 only: a demo run passes both stages.
    const demo = await fetch(`${s.api.replace(/\/api\/v2$/, "")}/demo/runs`, { method: "POST", headers: authorized(s.token), body: "{}" });
    expect(((await demo.json()) as { stages: unknown }).stages).toStrictEqual({ post_plan: "passed", pre_apply: "passed" });
    expect(s.output()).not.toMatch(/could not be opened|cannot be built/);
    expect(await s.stop()).toBe(0);
  }, 60_000);

  it("--retire refuses the active key and a key the keyring does not hold, changing nothing", async () => {
    const dir = join(root, "b");
    expect(await (await serve(dir)).stop()).toBe(0);
    const before = readFileSync(join(dir, "keyring.json"), "utf8");
    const active = await run(["reencrypt", "--data-dir", dir, "--retire", "k1"]);
    expect([active.code, active.stderr]).toEqual([1, "runplane reencrypt: --retire k1: it is the active key; make another key active on every host first\n"]);
    const unknown = await run(["reencrypt", "--data-dir", dir, "--retire", "k9"]);
    expect([unknown.code, unknown.stderr]).toEqual([1, "runplane reencrypt: --retire k9: the keyring holds no such key (it holds k1)\n"]);
    expect(readFileSync(join(dir, "keyring.json"), "utf8")).toBe(before);
  }, 30_000);

  it("doctor fails the keys check for values sealed with a key removed from the keyring", async () => {
    const dir = join(root, "c");
    expect(await (await serve(dir)).stop()).toBe(0);
    writeKeyring(dir, { keys: [{ id: "k2", key: generateKey() }] });
    const doctor = await run(["doctor", "--data-dir", dir, "--port", "0", "--integration-port", "0"]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(
      `FAIL keys: k1 seals 2 values (2 run task HMAC keys), but ${join(dir, "keyring.json")} holds no key k1: put it back (a key leaves the keyring only once it seals nothing: \`runplane reencrypt --retire <key id>\`)\n`,
    );
  }, 30_000);
});
