import { describe, expect, it } from "vitest";
import { generateKey } from "../../src/index.js";
import { createTestApp } from "../helpers/app.js";
import { expectNoSecret, STORAGES, theEvent } from "./helpers.js";

// decision D53: a key activation and a re-encryption are recorded in every organization's trail.
describe.each(STORAGES)("audit: keyring (%s)", (_name, makeStorage) => {
  it("records the activation of a new key and the re-encryption, key ids only", async () => {
    const k1 = generateKey();
    const k2 = generateKey();
    const app = await createTestApp({ storage: makeStorage(), keyring: { keys: [{ id: "k1", key: k1 }] } });
    await app.call("POST", "/api/v2/workspaces/ws-a/vars", { body: { data: { type: "vars", attributes: { key: "s", value: "secret-v", category: "env", sensitive: true } } } });
    await app.call("POST", "/api/v2/workspaces/ws-a/vars", { body: { data: { type: "vars", attributes: { key: "o", value: "x", category: "env" } } }, token: app.otherOrgToken });
    await app.runplane.directory.createApiToken({ organization: "other", kind: "team", teamId: "team-other-owners" });
    await app.runplane.keyring.reload({ keys: [{ id: "k1", key: k1 }, { id: "k2", key: k2 }], active: "k2" });
    expect(await app.runplane.reencrypt()).toBeGreaterThan(0);
    for (const organization of ["acme", "other"]) {
      const activation = await theEvent(app.storage, "keyring", "activate", organization);
      expect(activation.changes).toContainEqual({ field: "activeKeyId", old: "k1", new: "k2" });
      expect(activation.actor.kind).toBe("system");
      const reencrypt = await theEvent(app.storage, "keyring", "reencrypt", organization);
      expect(reencrypt.resource.id).toBe("k2");
      // Found by an auditor: the instance's count of values moved told one organization about others'.
      expect(reencrypt.changes).toStrictEqual([]);
    }
    const encodings = [k1, k2].flatMap((k) => [k, Buffer.from(k, "base64").toString("hex")]);
    await expectNoSecret(app.storage, ["secret-v", ...encodings]);
  });
});
