import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { seedDemo } from "../../examples/server/demo.js";
import { createKeyring, createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { inspectSealedValues } from "../../src/services/sealed-values.js";

const k1 = { id: "k1", key: generateKey() };
const k2 = { id: "k2", key: generateKey() };

/** A storage with one sensitive variable sealed under k1 and one under k2. */
async function sealedUnderTwoKeys() {
  const storage = createMemoryStorage();
  const first = createRunplane({ storage, keyring: { keys: [k1] }, logger: silentLogger });
  await seedDemo(first);
  await first.variables.create("ws-demo", { key: "a", value: "1", category: "env", sensitive: true });
  const second = createRunplane({ storage, keyring: { keys: [k1, k2], active: "k2" }, logger: silentLogger });
  await second.variables.create("ws-demo", { key: "b", value: "2", category: "env", sensitive: true });
  await second.variables.create("ws-demo", { key: "c", value: "3", category: "env" });
  return storage;
}

describe("what a keyring opens of a storage's sealed values (D11, D29)", () => {
  it("counts the sealed values by key and opens them with a keyring that holds both keys", async () => {
    const storage = await sealedUnderTwoKeys();
    expect(await inspectSealedValues(storage, createKeyring({ keys: [k1, k2] }))).toMatchObject({ byKey: { k1: 1, k2: 1 }, failure: null });
  });

  it("names a key the keyring no longer holds", async () => {
    const storage = await sealedUnderTwoKeys();
    const { failure } = await inspectSealedValues(storage, createKeyring({ keys: [k2] }));
    expect(failure).toMatch(/keyring key "k1": the keyring has no key with that id/);
  });

  it("names a key replaced under the same id", async () => {
    const storage = await sealedUnderTwoKeys();
    const { failure } = await inspectSealedValues(storage, createKeyring({ keys: [{ id: "k1", key: generateKey() }, k2] }));
    expect(failure).toMatch(/cannot decrypt a value sealed with keyring key "k1"/);
  });
});
