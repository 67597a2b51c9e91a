import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { createReadCache } from "../../src/http/read-cache.js";
import type { Principal } from "../../src/schemas/common.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { createTestApp } from "../helpers/app.js";
import { useTempSqliteFile } from "../helpers/sqlite-files.js";

const LIST = "/api/v2/workspaces/ws-a/vars";
const keysOf = (json: any): string[] => json.data.map((v: any) => v.attributes.key).sort();

/**
 * The read cache (src/http/read-cache.ts) answers a repeated variable list from memory. Every case
 * here first warms it with the same request, then changes something the answer depends on through
 * a path that is not the HTTP API, and expects the very next request to see the change.
 */
describe("read cache: a repeated variable list", () => {
  it("answers the same bytes again without reading the variables", async () => {
    const app = await createTestApp();
    await app.runplane.variables.create("ws-a", { key: "region", value: "eu", category: "env" });
    const first = await app.call("GET", LIST);
    const list = vi.spyOn(app.storage.variables, "list");
    const second = await app.call("GET", LIST);
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(second.headers.get("content-type")).toBe("application/vnd.api+json");
    expect(list).not.toHaveBeenCalled();
  });

  it("sees a variable created, updated or deleted by the host's own code at once", async () => {
    const app = await createTestApp();
    await app.call("GET", LIST);
    const v = await app.runplane.variables.create("ws-a", { key: "region", value: "eu", category: "env" });
    expect(keysOf((await app.call("GET", LIST)).json)).toEqual(["region"]);
    await app.runplane.variables.update("ws-a", v.id, { value: "us" });
    expect((await app.call("GET", LIST)).json.data[0].attributes.value).toBe("us");
    await app.runplane.variables.delete("ws-a", v.id);
    expect((await app.call("GET", LIST)).json.data).toEqual([]);
  });

  it("answers 401 once the token is revoked", async () => {
    const app = await createTestApp();
    expect((await app.call("GET", LIST)).status).toBe(200);
    const record = await app.runplane.directory.findApiToken(app.ownerToken);
    await app.runplane.directory.revokeApiToken(record!.id);
    expect((await app.call("GET", LIST)).status).toBe(401);
  });

  it("answers 404 once the caller's team loses its access to the project", async () => {
    const app = await createTestApp();
    const grant = await app.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" });
    expect((await app.call("GET", LIST, { token: app.devToken })).status).toBe(200);
    await app.runplane.teamProjects.delete(grant.id);
    expect((await app.call("GET", LIST, { token: app.devToken })).status).toBe(404);
  });

  it("answers 404 once the caller leaves the team that had access", async () => {
    const app = await createTestApp();
    await app.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" });
    expect((await app.call("GET", LIST, { token: app.devToken })).status).toBe(200);
    await app.runplane.directory.teams.update("team-devs", { members: [] });
    expect((await app.call("GET", LIST, { token: app.devToken })).status).toBe(404);
  });

  it("never answers one caller with another's entry", async () => {
    const app = await createTestApp();
    expect((await app.call("GET", LIST)).status).toBe(200);
    expect((await app.call("GET", LIST, { token: app.devToken })).status).toBe(404);
    expect((await app.call("GET", LIST, { token: app.otherOrgToken })).status).toBe(404);
    expect((await app.call("GET", LIST, { token: null })).status).toBe(401);
  });

  it("writes a renamed workspace's new name into the relationship links", async () => {
    const app = await createTestApp();
    await app.runplane.variables.create("ws-a", { key: "region", value: "eu", category: "env" });
    await app.call("GET", LIST);
    await app.runplane.directory.workspaces.update("ws-a", { name: "renamed-ws" });
    const related = (await app.call("GET", LIST)).json.data[0].relationships.configurable.links.related;
    expect(related).toBe("/api/v2/organizations/acme/workspaces/renamed-ws");
  });

  it("answers HEAD from the cache with headers and no body", async () => {
    const app = await createTestApp();
    await app.call("GET", LIST);
    const head = await app.call("HEAD", LIST);
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    expect(head.headers.get("content-type")).toBe("application/vnd.api+json");
  });

  it("keeps recording last-used-at for a token whose reads are all cached", async () => {
    let now = Date.UTC(2026, 0, 1);
    const app = await createTestApp({ clock: () => new Date(now) });
    await app.call("GET", LIST);
    const first = (await app.runplane.directory.findApiToken(app.ownerToken))!.lastUsedAt;
    now += 61_000;
    await app.call("GET", LIST);
    await app.call("GET", LIST);
    const later = (await app.runplane.directory.findApiToken(app.ownerToken))!.lastUsedAt;
    expect(Date.parse(later!)).toBe(now);
    expect(later).not.toBe(first);
  });

  it("is off with `readCache: false`: every request reads the token and the variables", async () => {
    const app = await createTestApp({ readCache: false });
    await app.call("GET", LIST);
    const list = vi.spyOn(app.storage.variables, "list");
    await app.call("GET", LIST);
    await app.call("GET", LIST);
    expect(list).toHaveBeenCalledTimes(2);
  });

  it("is off with a host authenticator, which may read more of the request than the token", async () => {
    const principal: Principal = { organization: "acme", kind: "organization", teamIds: [], isOwner: true, orgPermissions: [] };
    const authenticate = vi.fn(async (request: Request) => (request.headers.get("x-allow") === "yes" ? principal : null));
    const app = await createTestApp({ authenticate });
    expect((await app.call("GET", LIST, { headers: { "x-allow": "yes" } })).status).toBe(200);
    expect((await app.call("GET", LIST, { headers: { "x-allow": "no" } })).status).toBe(401);
    expect(authenticate).toHaveBeenCalledTimes(2);
  });

  it("is off for a storage without revisions", async () => {
    const { revisions: _, ...storage } = createMemoryStorage();
    const app = await createTestApp({ storage });
    await app.call("GET", LIST);
    const list = vi.spyOn(app.storage.variables, "list");
    await app.call("GET", LIST);
    expect(list).toHaveBeenCalledTimes(1);
  });
});

describe("read cache: two instances sharing one SQLite file", () => {
  const file = useTempSqliteFile("rp-read-cache-");

  it("sees writes made through the other instance (another process in production)", async () => {
    const keyring = { keys: [{ id: "k1", key: generateKey() }] };
    const reader = await createTestApp({ storage: createSqliteStorage(file.connect()), keyring });
    const writer = createRunplane({ storage: createSqliteStorage(file.connect()), keyring, logger: silentLogger });
    await reader.call("GET", LIST);
    await writer.variables.create("ws-a", { key: "shared", value: "1", category: "env" });
    expect(keysOf((await reader.call("GET", LIST)).json)).toEqual(["shared"]);
    await writer.teamProjects.create("prj-a", "team-devs", { access: "read" });
    expect((await reader.call("GET", LIST, { token: reader.devToken })).status).toBe(200);
    await writer.directory.revokeApiToken((await writer.directory.findApiToken(reader.ownerToken))!.id);
    expect((await reader.call("GET", LIST)).status).toBe(401);
    await writer.close();
  });

  it("sees a variable changed and a token revoked by another process at the very next request (D60)", async () => {
    const reader = await createTestApp({ storage: createSqliteStorage(file.connect()) });
    await reader.runplane.variables.create("ws-a", { key: "before", value: "1", category: "env" });
    for (let i = 0; i < 3; i++) expect(keysOf((await reader.call("GET", LIST)).json)).toEqual(["before"]);
    inAnotherProcess(file.path, "UPDATE variables SET key = 'after'");
    expect(keysOf((await reader.call("GET", LIST)).json)).toEqual(["after"]);
    const { digest } = (await reader.runplane.directory.findApiToken(reader.ownerToken))!;
    inAnotherProcess(file.path, `DELETE FROM api_tokens WHERE digest = '${digest}'`);
    expect((await reader.call("GET", LIST)).status).toBe(401);
  });
});

/** Runs `sql` against the SQLite file from a separate node process with its own better-sqlite3 connection. */
function inAnotherProcess(path: string, sql: string): void {
  const script = "const D = require('better-sqlite3'); const db = new D(process.argv[1]); db.pragma('busy_timeout = 5000'); db.exec(process.argv[2]); db.close();";
  execFileSync(process.execPath, ["-e", script, path, sql], { cwd: fileURLToPath(new URL("../../", import.meta.url)), stdio: "pipe" });
}

describe("createReadCache", () => {
  const cache = (maxBytes: number, now = () => 0, maxAgeMs = 60_000) => createReadCache({ maxBytes, maxAgeMs, now });

  it("answers only for the stamp an entry was stored under", () => {
    const c = cache(1000);
    c.set("k", "1,1", "body");
    expect(c.get("k", "1,2")).toBeUndefined();
    // A miss on another stamp drops the entry: it can never match again (counters only grow).
    expect(c.get("k", "1,1")).toBeUndefined();
    c.set("k", "1,2", "body2");
    expect(new TextDecoder().decode(c.get("k", "1,2"))).toBe("body2");
  });

  it("forgets an entry older than maxAgeMs", () => {
    let t = 0;
    const c = cache(1000, () => t, 100);
    c.set("k", "s", "body");
    t = 99;
    expect(c.get("k", "s")).toBeDefined();
    t = 100;
    expect(c.get("k", "s")).toBeUndefined();
  });

  it("holds at most maxBytes, dropping the least recently used first", () => {
    const c = cache(800);
    // Each entry costs 100 (key, stamp and body): the ninth pushes the first out.
    for (const key of ["a", "b", "c", "d", "e", "f", "g", "h", "i"]) c.set(key, "s", "x".repeat(98));
    expect(c.bytes).toBe(800);
    expect(c.get("a", "s")).toBeUndefined();
    expect(c.get("i", "s")).toBeDefined();
    expect(c.get("b", "s")).toBeDefined();
    c.set("j", "s", "x".repeat(98));
    expect(c.get("c", "s")).toBeUndefined();
    expect(c.get("b", "s")).toBeDefined();
  });

  it("does not keep a body larger than an eighth of the cache", () => {
    const c = cache(800);
    c.set("big", "s", "x".repeat(200));
    expect(c.size).toBe(0);
    expect(c.bytes).toBe(0);
  });

  it("refuses a negative or fractional size", () => {
    expect(() => cache(-1)).toThrow(TypeError);
    expect(() => cache(1.5)).toThrow(TypeError);
  });
});
