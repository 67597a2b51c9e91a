import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";
import { gatedStorage } from "../helpers/gated-storage.js";

// Decision D28: `health()` reads the storage once and says `degraded`, with a reason an operator can
// act on, while the database cannot be reached; it never throws.

function instance() {
  const gate = gatedStorage(createMemoryStorage());
  const runplane = createRunplane({ storage: gate.storage, logger: silentLogger, keyring: { keys: [{ id: "k1", key: generateKey() }] } });
  return { gate, runplane };
}

describe("runplane.health()", () => {
  it("is ok with no reasons while the storage answers", async () => {
    const { runplane } = instance();
    expect(await runplane.health()).toEqual({ status: "ok", reasons: [], storage: "ok", deliveries: "ok" });
  });

  it("is degraded with the storage's reason while it cannot be reached, and ok again once it is back", async () => {
    const { gate, runplane } = instance();
    gate.failFrom(0);
    expect(await runplane.health()).toEqual({ status: "degraded", reasons: ["storage unreachable: connection refused"], storage: "unreachable", deliveries: "ok" });
    expect(gate.tripped).toBe(true);
    gate.failFrom(null);
    expect((await runplane.health()).status).toBe("ok");
  });

  it("calls a storage that answers busy (a locked SQLite file, a lock timeout) busy, not unreachable", async () => {
    const storage = createMemoryStorage();
    storage.organizations.get = async () => {
      throw new StorageUnavailableError("database busy", "SQLITE_BUSY");
    };
    const runplane = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k1", key: generateKey() }] } });
    expect(await runplane.health()).toEqual({ status: "degraded", reasons: ["storage busy: database busy"], storage: "busy", deliveries: "ok" });
  });

  it("names only the error's kind when the storage read fails otherwise (a message may quote a host or a value)", async () => {
    const storage = createMemoryStorage();
    storage.organizations.get = async () => {
      throw new TypeError("relation at db.internal:5432 with secret s3cr3t");
    };
    const runplane = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k1", key: generateKey() }] } });
    const health = await runplane.health();
    expect(health).toEqual({ status: "degraded", reasons: ["storage read failed: TypeError"], storage: "unreachable", deliveries: "ok" });
  });
});
