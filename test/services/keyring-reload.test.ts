import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createKeyring, createRunplane, generateKey, RunplaneOptionsError, silentLogger, type KeyringOptions } from "../../src/index.js";
import { answering200 } from "../helpers/app.js";

// Decision D29: a runplane's keys change at run time, from the host's call or its keyring source,
// all at once or not at all, and never so that a stored value loses its key.

const k1 = { id: "k1", key: generateKey() };
const k2 = { id: "k2", key: generateKey() };

/** A runplane whose keyring source returns `state.file` and counts its reads. */
function withSource(file: KeyringOptions | (() => never)) {
  const state = { file, reads: 0 };
  const source = () => (state.reads++, typeof state.file === "function" ? state.file() : state.file);
  const runplane = createRunplane({ storage: createMemoryStorage(), logger: silentLogger, transport: answering200(), keyring: createKeyring({ keys: [k1], source }) });
  return { state, runplane };
}

describe("runplane.keyring.reload (D29)", () => {
  it("reads the source again and holds its keys from then on", async () => {
    const { state, runplane } = withSource({ keys: [k1] });
    state.file = { keys: [k1, k2], active: "k2" };
    expect(await runplane.keyring.reload()).toStrictEqual({ changed: true, keyIds: ["k1", "k2"], activeKeyId: "k2" });
    expect(runplane.keyring.activeKeyId).toBe("k2");
    expect(await runplane.keyring.reload()).toStrictEqual({ changed: false, keyIds: ["k1", "k2"], activeKeyId: "k2" });
  });

  it("shares one read of the source between reloads asked for at once", async () => {
    const { state, runplane } = withSource({ keys: [k1, k2] });
    await Promise.all([runplane.keyring.reload(), runplane.keyring.reload(), runplane.keyring.reload()]);
    expect(state.reads).toBe(1);
  });

  it("keeps the current keys when the new ones are not a keyring, saying why without the key", async () => {
    const { runplane } = withSource({ keys: [k1] });
    const bad = { keys: [{ id: "k2", key: Buffer.alloc(8).toString("base64") }] };
    await expect(runplane.keyring.reload(bad)).rejects.toThrow(/keyring key "k2" must be 32 bytes/);
    await expect(runplane.keyring.reload({ keys: [k1], active: "k9" })).rejects.toThrow(/active key k9 is not in the keyring/);
    expect(runplane.keyring.keyIds).toStrictEqual(["k1"]);
  });

  it("names only the error's kind when the source throws (its message may quote a key)", async () => {
    const { runplane } = withSource(() => {
      throw new SyntaxError(`Unexpected token in ${k2.key}`);
    });
    const error = (await runplane.keyring.reload().catch((e: unknown) => e)) as Error;
    expect(error.message).toBe("the keyring source failed (SyntaxError): keeping the current keys");
  });

  it("reports the message of a source's error named KeyringSourceError, which vouches it quotes no key", async () => {
    const { runplane } = withSource(() => {
      throw Object.assign(new Error("keyring.json is not valid JSON (line 2, column 12)"), { name: "KeyringSourceError" });
    });
    const error = (await runplane.keyring.reload().catch((e: unknown) => e)) as Error;
    expect(error.message).toBe("the keyring source failed: keyring.json is not valid JSON (line 2, column 12): keeping the current keys");
  });

  it("refuses without options when the keyring has no source", async () => {
    const runplane = createRunplane({ storage: createMemoryStorage(), logger: silentLogger, keyring: { keys: [k1] } });
    await expect(runplane.keyring.reload()).rejects.toThrow(/no source to reload from/);
  });

  it("refuses a keyring that drops a key still sealing a value, naming what it seals", async () => {
    const runplane = createRunplane({ storage: createMemoryStorage(), logger: silentLogger, transport: answering200(), keyring: { keys: [k1] } });
    await runplane.directory.organizations.create({ name: "o" });
    await runplane.runTasks.tasks.create("o", { name: "scan", url: "https://scanner.example/hook", "hmac-key": "secret" });
    await expect(runplane.keyring.reload({ keys: [k2] })).rejects.toThrow(
      "the new keyring drops a key in use (k1 still seals 1 value (1 run task HMAC key)): keeping the current keys; run `runplane reencrypt` with k2 active on every host, then remove the key",
    );
    expect(runplane.keyring.keyIds).toStrictEqual(["k1"]);
  });

  it("reencrypt on a host that missed a rotation reloads its keyring, then moves every value to the new active key", async () => {
    // Two hosts share a database and a keyring file; the operator rotates it, B starts after, A is not told.
    const storage = createMemoryStorage();
    let file: KeyringOptions = { keys: [k1] };
    const host = () => createRunplane({ storage, logger: silentLogger, transport: answering200(), keyring: createKeyring({ ...file, source: () => file }) });
    const a = host();
    await a.directory.organizations.create({ name: "o" });
    await a.runTasks.tasks.create("o", { name: "before", url: "https://scanner.example/hook", "hmac-key": "secret-before" });
    file = { keys: [k1, k2], active: "k2" };
    const b = host();
    await b.runTasks.tasks.create("o", { name: "after", url: "https://scanner.example/hook", "hmac-key": "secret-after" });

    expect(await a.reencrypt()).toBe(1);
    expect(a.keyring.activeKeyId).toBe("k2");
    expect(await a.sealedValues()).toStrictEqual({ k2: { "tasks.hmac_key": 2 } });
  });

  it("is an option error when keyring.source is not a function", () => {
    expect(() => createRunplane({ storage: createMemoryStorage(), keyring: { keys: [k1], source: "keyring.json" as never } })).toThrow(RunplaneOptionsError);
  });
});
