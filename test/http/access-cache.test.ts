import { describe, expect, it, vi } from "vitest";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { createAccessCache } from "../../src/http/access-cache.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { useTempSqliteFile } from "../helpers/sqlite-files.js";

const LIST = "/api/v2/workspaces/ws-a/vars";
let n = 0;
const create = (app: TestApp, token?: string) =>
  app.call("POST", LIST, { body: { data: { type: "vars", attributes: { key: `k_${++n}`, value: "v", category: "env" } } }, ...(token ? { token } : {}) });

/**
 * A write request's principal and authorization decision are remembered per token for
 * one directory revision (src/http/access-cache.ts). Each case warms the cache with a write, changes
 * what the decision depends on outside the HTTP API, and expects the very next write to obey (D21).
 */
describe("access cache: repeated writes with one token", () => {
  it("read the token, its team and the grants once", async () => {
    const app = await createTestApp();
    await app.runplane.teamProjects.create("prj-a", "team-devs", { access: "write" });
    const token = vi.spyOn(app.storage.apiTokens, "findByDigest");
    const grants = vi.spyOn(app.storage.teamProjects, "listForTeams");
    for (let i = 0; i < 3; i++) expect((await create(app, app.devToken)).status).toBe(201);
    expect(token).toHaveBeenCalledTimes(1);
    expect(grants).toHaveBeenCalledTimes(1);
  });

  it("read the workspace once each, by the route that authorizes it", async () => {
    const app = await createTestApp();
    await create(app);
    const workspace = vi.spyOn(app.storage.workspaces, "get");
    expect((await create(app)).status).toBe(201);
    expect(workspace).toHaveBeenCalledTimes(1);
    // The programmatic API still checks the workspace itself.
    await expect(app.runplane.variables.create("ws-missing", { key: "k", value: "v", category: "env" })).rejects.toMatchObject({ status: 404 });
  });

  it("answer 401 once the token is revoked", async () => {
    const app = await createTestApp();
    expect((await create(app)).status).toBe(201);
    await app.runplane.directory.revokeApiToken((await app.runplane.directory.findApiToken(app.ownerToken))!.id);
    expect((await create(app)).status).toBe(401);
  });

  it("answer 401 once an owner revoked the token over the API", async () => {
    const app = await createTestApp();
    await app.runplane.teamProjects.create("prj-a", "team-devs", { access: "write" });
    expect((await create(app, app.devToken)).status).toBe(201);
    const dev = (await app.runplane.directory.findApiToken(app.devToken))!.id;
    expect((await app.call("DELETE", `/api/v2/authentication-tokens/${dev}`)).status).toBe(204);
    expect((await create(app, app.devToken)).status).toBe(401);
  });

  it("answer 404 once the team's access drops to read, and once the caller leaves the team", async () => {
    const app = await createTestApp();
    const grant = await app.runplane.teamProjects.create("prj-a", "team-devs", { access: "write" });
    expect((await create(app, app.devToken)).status).toBe(201);
    await app.runplane.teamProjects.update(grant.id, { access: "read" });
    expect((await create(app, app.devToken)).status).toBe(404);
    await app.runplane.teamProjects.update(grant.id, { access: "write" });
    expect((await create(app, app.devToken)).status).toBe(201);
    await app.runplane.directory.teams.update("team-devs", { members: [] });
    expect((await create(app, app.devToken)).status).toBe(404);
  });

  it("never lends one token's principal or decision to another, and keeps no unknown token", async () => {
    const app = await createTestApp();
    expect((await create(app)).status).toBe(201);
    expect((await create(app, app.devToken)).status).toBe(404);
    expect((await create(app, app.otherOrgToken)).status).toBe(404);
    const token = vi.spyOn(app.storage.apiTokens, "findByDigest");
    for (let i = 0; i < 2; i++) expect((await create(app, "not-a-token")).status).toBe(401);
    expect(token).toHaveBeenCalledTimes(2);
  });

  it("keeps recording last-used-at", async () => {
    let now = Date.UTC(2026, 0, 1);
    const app = await createTestApp({ clock: () => new Date(now) });
    await create(app);
    now += 61_000;
    await create(app);
    expect(Date.parse((await app.runplane.directory.findApiToken(app.ownerToken))!.lastUsedAt!)).toBe(now);
  });
});

describe("access cache: one token, two actions on one workspace", () => {
  it("lets a read-only team token list variables but not create one", async () => {
    const app = await createTestApp();
    await app.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" });
    const { token } = await app.runplane.directory.createApiToken({ organization: "acme", kind: "team", teamId: "team-devs" });
    expect((await create(app)).status).toBe(201);
    const before = await app.call("GET", LIST, { token });
    expect(before.status).toBe(200);
    expect(before.json.data).toHaveLength(1);
    // decision D4: a valid credential without the permission gets 404, like a missing object.
    expect((await create(app, token)).status).toBe(404);
    // Nothing was created: the owner sees the same list the team saw.
    expect((await app.call("GET", LIST)).json.data).toStrictEqual(before.json.data);
  });
});

describe("access cache: two instances sharing one SQLite file", () => {
  const file = useTempSqliteFile("rp-access-cache-");

  it("obeys a grant removed and a token revoked through the other instance", async () => {
    const keyring = { keys: [{ id: "k1", key: generateKey() }] };
    const app = await createTestApp({ storage: createSqliteStorage(file.connect()), keyring });
    const other = createRunplane({ storage: createSqliteStorage(file.connect()), keyring, logger: silentLogger });
    const grant = await other.teamProjects.create("prj-a", "team-devs", { access: "write" });
    expect((await create(app, app.devToken)).status).toBe(201);
    await other.teamProjects.delete(grant.id);
    expect((await create(app, app.devToken)).status).toBe(404);
    expect((await create(app)).status).toBe(201);
    await other.directory.revokeApiToken((await other.directory.findApiToken(app.ownerToken))!.id);
    expect((await create(app)).status).toBe(401);
    // Revoked over the other instance's API, refused by this one's next request.
    const owners = await other.directory.createApiToken({ organization: "acme", kind: "team", teamId: "team-owners" });
    expect((await create(app, owners.token)).status).toBe(201);
    const dev = (await other.directory.findApiToken(app.devToken))!.id;
    const revoked = await other.handler(new Request(`http://localhost/api/v2/authentication-tokens/${dev}`, { method: "DELETE", headers: { authorization: `Bearer ${owners.token}` } }));
    expect(revoked.status).toBe(204);
    expect((await create(app, app.devToken)).status).toBe(401);
    await other.close();
  });
});

describe("createAccessCache", () => {
  it("answers for its stamp and age only, and holds at most maxEntries", () => {
    let t = 0;
    const c = createAccessCache({ maxEntries: 2, maxAgeMs: 100, now: () => t });
    c.set("a", 1, "A");
    expect(c.get("a", 2)).toBeUndefined();
    expect(c.get("a", 1)).toBeUndefined();
    c.set("a", 1, "A");
    t = 99;
    expect(c.get("a", 1)).toBe("A");
    t = 200;
    expect(c.get("a", 1)).toBeUndefined();
    c.set("a", 1, "A");
    c.set("b", 1, "B");
    c.get("a", 1);
    c.set("c", 1, "C");
    expect([c.get("a", 1), c.get("b", 1), c.get("c", 1), c.size]).toStrictEqual(["A", undefined, "C", 2]);
  });
});
