import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { DEMO } from "../../examples/server/demo.js";
import { ownersToken } from "../../examples/server/owners-token.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { eventsOf, expectNoSecret } from "./helpers.js";

const FIRST = "admin-token-first-0123456789abcdef0123";
const SECOND = "admin-token-second-0123456789abcdef012";

// decision D53: rotating the reference server's ADMIN_TOKEN is a create and a revoke in the trail.
describe("audit: ADMIN_TOKEN rotation", () => {
  it("records the new ADMIN_TOKEN and the revocation of the old one, never either secret", async () => {
    const storage = createMemoryStorage();
    const runplane = createRunplane({ storage, logger: silentLogger, keyring: { keys: [{ id: "k1", key: generateKey() }] } });
    await runplane.directory.organizations.create({ name: DEMO.organization });
    await runplane.directory.teams.create({ id: DEMO.ownersTeam, name: "owners", organization: DEMO.organization });
    const dataDir = { lastTokenId: () => null, forgetTokenId: () => undefined, rememberTokenId: () => undefined } as unknown as Parameters<typeof ownersToken>[2];
    await ownersToken(runplane, storage, dataDir, FIRST);
    const first = (await eventsOf(storage, DEMO.organization)).find((e) => e.resource.type === "api-token" && e.action === "create")!;
    expect(first.changes).toContainEqual({ field: "description", new: "ADMIN_TOKEN" });
    const { revoked } = await ownersToken(runplane, storage, dataDir, SECOND);
    expect(revoked).toStrictEqual([{ id: first.resource.id, was: "ADMIN_TOKEN" }]);
    const tokens = (await eventsOf(storage, DEMO.organization)).filter((e) => e.resource.type === "api-token");
    expect(tokens.filter((e) => e.action === "revoke").map((e) => e.resource.id)).toStrictEqual([first.resource.id]);
    expect(tokens.filter((e) => e.action === "create" && e.changes.some((c) => c.new === "ADMIN_TOKEN"))).toHaveLength(2);
    await expectNoSecret(storage, [FIRST, SECOND]);
    await runplane.close();
  });
});
