import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createKeyring, generateKey, rowBinding } from "../../src/crypto/keyring.js";
import { createRunplane, silentLogger } from "../../src/index.js";
import { answering200 } from "../helpers/app.js";

describe("keyring (D11)", () => {
  const k1 = generateKey();
  const k2 = generateKey();

  it("round-trips a value bound to its row and refuses it in another row", () => {
    const ring = createKeyring({ keys: [{ id: "k1", key: k1 }] });
    const sealed = ring.seal("hunter2 ✓", rowBinding("vars", "value", "var-1"));
    expect(sealed).toMatch(/^rpv1:k1:/);
    expect(sealed).not.toContain("hunter2");
    expect(ring.open(sealed, rowBinding("vars", "value", "var-1"))).toBe("hunter2 ✓");
    expect(() => ring.open(sealed, rowBinding("vars", "value", "var-2"))).toThrow();
  });

  it("uses a fresh nonce per seal", () => {
    const ring = createKeyring({ keys: [{ id: "k1", key: k1 }] });
    expect(ring.seal("x", "ad")).not.toBe(ring.seal("x", "ad"));
  });

  it("refuses a tampered ciphertext", () => {
    const ring = createKeyring({ keys: [{ id: "k1", key: k1 }] });
    const sealed = ring.seal("value", "ad");
    const last = sealed.at(-2) === "A" ? "B" : "A";
    expect(() => ring.open(`${sealed.slice(0, -2)}${last}${sealed.at(-1)}`, "ad")).toThrow();
  });

  it("opens values of an older key after rotation and seals with the active one", () => {
    const old = createKeyring({ keys: [{ id: "k1", key: k1 }] });
    const sealed = old.seal("v", "ad");
    const rotated = createKeyring({ keys: [{ id: "k1", key: k1 }, { id: "k2", key: k2 }], active: "k2" });
    expect(rotated.open(sealed, "ad")).toBe("v");
    expect(rotated.keyIdOf(rotated.seal("v", "ad"))).toBe("k2");
  });

  it("names the key of a sealed value only, whatever its length", () => {
    const ring = createKeyring({ keys: [{ id: "k-1", key: k1 }] });
    expect(ring.keyIdOf(ring.seal("x".repeat(5000), "ad"))).toBe("k-1");
    for (const notSealed of ["rpv1:k:a", "rpv1:k:a:b:c", "rpv2:k:a:b", "k:a:b:c", "", "rpv1"]) expect(ring.keyIdOf(notSealed), notSealed).toBeNull();
  });

  it("rejects keys that are not 32 bytes, duplicate ids and an unknown active id", () => {
    expect(() => createKeyring({ keys: [{ id: "k", key: Buffer.alloc(16).toString("base64") }] })).toThrow(/32 bytes/);
    expect(() => createKeyring({ keys: [{ id: "k", key: k1 }, { id: "k", key: k2 }] })).toThrow(/duplicate/);
    expect(() => createKeyring({ keys: [{ id: "k", key: k1 }], active: "nope" })).toThrow(/active/);
  });

  it("re-encrypts every sensitive variable and run task HMAC key to the active key without changing plaintext", async () => {
    const storage = createMemoryStorage();
    const before = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k1", key: k1 }] }, transport: answering200() });
    await before.directory.organizations.create({ name: "o" });
    await before.directory.projects.create({ id: "prj-1", name: "p", organization: "o" });
    await before.directory.workspaces.create({ id: "ws-1", name: "w", organization: "o", projectId: "prj-1" });
    for (const key of ["a", "b", "c"]) await before.variables.create("ws-1", { key, value: `v-${key}`, category: "env", sensitive: true });
    const task = await before.runTasks.tasks.create("o", { name: "scan", url: "https://scanner.example/hook", "hmac-key": "task-secret" });
    await before.variables.create("ws-1", { key: "plain", value: "p", category: "env" });
    // A restart: the host holding only k1 stops (decision D40: while it lived, k2 would wait for it).
    await before.close();

    const after = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k1", key: k1 }, { id: "k2", key: k2 }], active: "k2" } });
    expect(await after.reencrypt()).toBe(4);
    expect(await after.reencrypt()).toBe(0);
    const rows = await storage.sealedValues.scan("vars.value", { afterId: null, limit: 10 });
    expect(rows.every((r) => r.value.startsWith("rpv1:k2:"))).toBe(true);
    const onlyNew = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k2", key: k2 }] } });
    expect((await onlyNew.variables.resolveForRun("ws-1")).map((v) => v.value).sort()).toEqual(["p", "v-a", "v-b", "v-c"]);
    expect((await storage.runTasks.get(task.id))?.hmacKey).toMatch(/^rpv1:k2:/);
  });
});
