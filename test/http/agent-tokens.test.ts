import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { ROUTE_PERMISSIONS } from "../../src/http/route-permissions.js";
import { sha256Hex } from "../../src/crypto/random.js";
import { createTestApp, type TestApp, type TestResponse } from "../helpers/app.js";
import { STORAGES } from "../helpers/storages.js";

const POOL = "apool-a";
const TOKENS = `/api/v2/agent-pools/${POOL}/authentication-tokens`;
const token = (id: string) => `/api/v2/authentication-tokens/${id}`;
const body = (attributes: Record<string, unknown>, type = "authentication-tokens") => ({ data: { type, attributes } });
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** decision D22: `<token id>.<pool id>.<43 base64url chars>`. */
const TOKEN_SHAPE = /^(at-[0-9A-Za-z]{16})\.apool-a\.[A-Za-z0-9_-]{43}$/;

describe.each(STORAGES)("agent tokens over HTTP ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  let file: string | undefined;
  const app = async (options: Parameters<typeof createTestApp>[0] = {}): Promise<TestApp> => {
    const s = setup.create();
    dispose = s.dispose;
    file = s.file;
    const a = await createTestApp({ ...options, storage: s.storage });
    await a.runplane.directory.agentPools.create({ id: POOL, name: "build pool", organization: "acme" });
    await a.runplane.directory.agentPools.create({ id: "apool-other", name: "their pool", organization: "other" });
    return a;
  };
  const create = (a: TestApp, description: unknown = "ci agents", init: { token?: string } = {}) =>
    a.call("POST", TOKENS, { ...init, body: body({ description }) });
  const seed = async (a: TestApp, n: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await create(a, `t${String(i).padStart(2, "0")}`);
      expect(res.status).toBe(201);
      ids.push(res.json.data.id);
    }
    return ids;
  };
  const descriptions = (res: TestResponse): string[] => res.json.data.map((d: any) => d.attributes.description);

  it("creates a token with 201, showing the token string once and created-by the caller", async () => {
    const a = await app();
    const res = await create(a);
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/vnd.api+json");
    const data = res.json.data;
    expect(data.type).toBe("authentication-tokens");
    expect(data.id).toMatch(/^at-[0-9A-Za-z]{16}$/);
    expect(Object.keys(data.attributes).sort()).toEqual(["created-at", "description", "expired-at", "last-used-at", "token"]);
    expect(data.attributes).toMatchObject({ description: "ci agents", "last-used-at": null, "expired-at": null });
    expect(data.attributes["created-at"]).toMatch(TIMESTAMP);
    expect(data.attributes.token).toMatch(TOKEN_SHAPE);
    expect(TOKEN_SHAPE.exec(data.attributes.token)![1]).toBe(data.id);
    expect(data.relationships).toEqual({
      team: { data: null },
      "created-by": { data: { type: "users", id: "user-owner" } },
    });
    expect(data.links.self).toBe(token(data.id));
  });

  it("accepts data.type agent-tokens, as go-tfe sends it (D22)", async () => {
    const a = await app();
    const res = await a.call("POST", TOKENS, { body: body({ description: "from go-tfe" }, "agent-tokens") });
    expect(res.status).toBe(201);
    expect(res.json.data.type).toBe("authentication-tokens");
  });

  it("records a team or organization creator and writes created-by as its service account user, which go-tfe's *User decodes (D49)", async () => {
    const a = await app();
    const team = (await a.runplane.directory.createApiToken({ organization: "acme", kind: "team", teamId: "team-owners" })).token;
    const org = (await a.runplane.directory.createApiToken({ organization: "acme", kind: "organization" })).token;
    const byTeam = (await create(a, "by team", { token: team })).json.data;
    const byOrg = (await create(a, "by org", { token: org })).json.data;
    expect(byTeam.relationships["created-by"]).toStrictEqual({ data: { type: "users", id: "api-team_team-owners" } });
    expect(byOrg.relationships["created-by"]).toStrictEqual({ data: { type: "users", id: "api-org_acme" } });
    const shown = await a.call("GET", `/api/v2/authentication-tokens/${byTeam.id}`);
    expect(shown.json.data.relationships["created-by"]).toStrictEqual({ data: { type: "users", id: "api-team_team-owners" } });
    expect((await a.runplane.agentTokens.get(byTeam.id)).createdBy).toStrictEqual({ type: "teams", id: "team-owners" });
    expect((await a.runplane.agentTokens.get(byOrg.id)).createdBy).toStrictEqual({ type: "organizations", id: "acme" });
  });

  it.each([
    ["a missing description", { data: { type: "authentication-tokens", attributes: {} } }, "/data/attributes/description"],
    ["an empty description", body({ description: "" }), "/data/attributes/description"],
    ["a blank description", body({ description: "  \t " }), "/data/attributes/description"],
    ["a null description", body({ description: null }), "/data/attributes/description"],
    ["a number as description", body({ description: 42 }), "/data/attributes/description"],
    ["an overlong description", body({ description: "x".repeat(257) }), "/data/attributes/description"],
    ["a wrong data.type", body({ description: "d" }, "vars"), "/data/type"],
    ["a missing data.type", { data: { attributes: { description: "d" } } }, "/data/type"],
    ["attributes that are not an object", { data: { type: "authentication-tokens", attributes: ["d"] } }, "/data/attributes"],
    ["no data object", { description: "d" }, "/data"],
  ])("answers 422 for %s, creating nothing", async (_name, document, pointer) => {
    const a = await app();
    const res = await a.call("POST", TOKENS, { body: document });
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toMatchObject({ status: "422", title: "invalid attribute", source: { pointer } });
    expect((await a.call("GET", TOKENS)).json.data).toEqual([]);
  });

  it("shows and lists metadata only: token null, the rest as created", async () => {
    const a = await app();
    const created = (await create(a)).json.data;
    const shown = await a.call("GET", token(created.id));
    expect(shown.status).toBe(200);
    const expected = { ...created, attributes: { ...created.attributes, token: null } };
    expect(shown.json.data).toEqual(expected);
    const listed = await a.call("GET", TOKENS);
    expect(listed.status).toBe(200);
    expect(listed.json.data).toEqual([expected]);
  });

  it("paginates the list with the D7 defaults, meta and absolute links", async () => {
    const a = await app();
    await seed(a, 23);
    const first = await a.call("GET", TOKENS);
    expect(first.json.data).toHaveLength(20);
    expect(first.json.meta.pagination).toEqual({
      "current-page": 1,
      "page-size": 20,
      "prev-page": null,
      "next-page": 2,
      "total-pages": 2,
      "total-count": 23,
    });
    expect(first.json.links.next).toBe(`http://localhost:8080${TOKENS}?page%5Bnumber%5D=2&page%5Bsize%5D=20`);
    const second = await a.call("GET", `${TOKENS}?page%5Bnumber%5D=2`);
    expect(descriptions(second)).toEqual(["t20", "t21", "t22"]);
    const small = await a.call("GET", `${TOKENS}?page[size]=5&page[number]=3`);
    expect(descriptions(small)).toEqual(["t10", "t11", "t12", "t13", "t14"]);
    const past = await a.call("GET", `${TOKENS}?page[number]=9`);
    expect(past.status).toBe(200);
    expect(past.json.data).toEqual([]);
    expect(past.json.meta.pagination).toMatchObject({ "current-page": 9, "total-count": 23, "next-page": null });
  });

  it("sorts by created-at ascending by default and with sort=created-at, descending with -created-at", async () => {
    const a = await app();
    await seed(a, 5);
    const ascending = ["t00", "t01", "t02", "t03", "t04"];
    expect(descriptions(await a.call("GET", TOKENS))).toEqual(ascending);
    expect(descriptions(await a.call("GET", `${TOKENS}?sort=created-at`))).toEqual(ascending);
    expect(descriptions(await a.call("GET", `${TOKENS}?sort=-created-at`))).toEqual([...ascending].reverse());
    expect(descriptions(await a.call("GET", `${TOKENS}?sort=-created-at&page[size]=2&page[number]=2`))).toEqual(["t02", "t01"]);
  });

  it("breaks created-at ties by id, in the direction of the sort", async () => {
    const frozen = new Date(Date.UTC(2026, 0, 1));
    const a = await app({ clock: () => frozen });
    const ids = await seed(a, 4);
    const byId = [...ids].sort();
    const listIds = async (query: string) => (await a.call("GET", `${TOKENS}${query}`)).json.data.map((d: any) => d.id);
    expect(await listIds("?sort=created-at")).toEqual(byId);
    expect(await listIds("?sort=-created-at")).toEqual([...byId].reverse());
  });

  it.each(["sort=name", "sort=", "sort=created_at", "sort=%2Bcreated-at", "sort=-created-at,description"])(
    "answers 400 with source.parameter sort for %s",
    async (query) => {
      const a = await app();
      const res = await a.call("GET", `${TOKENS}?${query}`);
      expect(res.status).toBe(400);
      expect(res.json.errors[0]).toMatchObject({ status: "400", title: "bad request", source: { parameter: "sort" } });
    },
  );

  it.each(["page[size]=101", "page[size]=0", "page[number]=0", "page[size]=ten"])("answers 422 for %s", async (query) => {
    const a = await app();
    const res = await a.call("GET", `${TOKENS}?${query}`);
    expect(res.status).toBe(422);
    expect(res.json.errors[0].source.parameter).toMatch(/^page\[/);
  });

  it("deletes with 204 and no body; the token is gone from show, list and delete", async () => {
    const a = await app();
    const [keep, drop] = await seed(a, 2);
    const res = await a.call("DELETE", token(drop!));
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    expect((await a.call("GET", token(drop!))).status).toBe(404);
    expect((await a.call("DELETE", token(drop!))).status).toBe(404);
    expect((await a.call("GET", TOKENS)).json.data.map((d: any) => d.id)).toEqual([keep]);
  });

  it("answers 404 for unknown pools and tokens", async () => {
    const a = await app();
    expect((await a.call("GET", "/api/v2/agent-pools/apool-nope/authentication-tokens")).status).toBe(404);
    expect((await a.call("POST", "/api/v2/agent-pools/apool-nope/authentication-tokens", { body: body({ description: "d" }) })).status).toBe(404);
    const missing = await a.call("GET", token("at-doesnotexist0000"));
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
    expect((await a.call("DELETE", token("at-doesnotexist0000"))).status).toBe(404);
  });

  it("answers 404, never 403, to principals of another organization or without the permission (D4, D21)", async () => {
    const a = await app();
    const id = (await create(a)).json.data.id;
    for (const caller of [a.otherOrgToken, a.devToken]) {
      expect((await a.call("GET", TOKENS, { token: caller })).status).toBe(404);
      expect((await create(a, "intruder", { token: caller })).status).toBe(404);
      expect((await a.call("GET", token(id), { token: caller })).status).toBe(404);
      expect((await a.call("DELETE", token(id), { token: caller })).status).toBe(404);
    }
    // The acme owner in turn cannot see the other organization's pool or tokens.
    const theirs = await a.runplane.agentTokens.create("apool-other", { description: "theirs", createdBy: { type: "organizations", id: "other" } });
    expect((await a.call("GET", "/api/v2/agent-pools/apool-other/authentication-tokens")).status).toBe(404);
    expect((await a.call("GET", token(theirs.id))).status).toBe(404);
    expect((await a.call("DELETE", token(theirs.id))).status).toBe(404);
    expect((await a.call("GET", token(theirs.id), { token: a.otherOrgToken })).status).toBe(200);
    expect((await a.call("GET", token(id))).status).toBe(200);
  });

  it("lets a member of a team with manage-agent-pools manage tokens, and no other organization permission (D21)", async () => {
    const a = await app();
    const d = a.runplane.directory;
    await d.users.create({ id: "user-pools", username: "pools" });
    await d.users.create({ id: "user-ws", username: "ws" });
    await d.teams.create({ id: "team-pools", name: "pool admins", organization: "acme", orgPermissions: ["manage-agent-pools"], members: ["user-pools"] });
    const others = ["manage-workspaces", "manage-projects", "manage-policies", "manage-run-tasks"] as const;
    await d.teams.create({ id: "team-ws", name: "almost", organization: "acme", orgPermissions: [...others], members: ["user-ws"] });
    const pools = (await d.createApiToken({ organization: "acme", kind: "user", userId: "user-pools" })).token;
    const ws = (await d.createApiToken({ organization: "acme", kind: "user", userId: "user-ws" })).token;

    const created = await create(a, "by pool admin", { token: pools });
    expect(created.status).toBe(201);
    expect(created.json.data.relationships["created-by"].data).toEqual({ type: "users", id: "user-pools" });
    const id = created.json.data.id;
    expect((await a.call("GET", TOKENS, { token: pools })).status).toBe(200);
    expect((await a.call("GET", token(id), { token: ws })).status).toBe(404);
    expect((await a.call("GET", TOKENS, { token: ws })).status).toBe(404);
    expect((await create(a, "nope", { token: ws })).status).toBe(404);
    expect((await a.call("DELETE", token(id), { token: ws })).status).toBe(404);
    expect((await a.call("GET", token(id), { token: pools })).status).toBe(200);
    expect((await a.call("DELETE", token(id), { token: pools })).status).toBe(204);
  });

  it("answers 401 without a credential", async () => {
    const a = await app();
    expect((await a.call("GET", TOKENS, { token: null })).status).toBe(401);
    expect((await a.call("POST", TOKENS, { token: null, body: body({ description: "d" }) })).status).toBe(401);
  });

  it("serves the token routes under the base path with the agent-tokens:manage action (D2, D21)", async () => {
    const a = await app();
    // A team's API tokens share the resource name but are the owners' to manage.
    const all = a.runplane.routes.filter((r) => r.path.includes("authentication-tokens")).map((r) => `${r.method} ${r.path}`);
    const paths = all.filter((p) => !p.includes("/teams/"));
    expect(all.filter((p) => p.includes("/teams/"))).toEqual(["GET /api/v2/teams/:team_id/authentication-tokens"]);
    expect(ROUTE_PERMISSIONS["GET /teams/:team_id/authentication-tokens"]).toBe("api-tokens:manage");
    expect(paths.sort()).toEqual([
      "DELETE /api/v2/authentication-tokens/:token_id",
      "GET /api/v2/agent-pools/:agent_pool_id/authentication-tokens",
      "GET /api/v2/authentication-tokens/:token_id",
      "POST /api/v2/agent-pools/:agent_pool_id/authentication-tokens",
    ]);
    for (const path of paths) expect(ROUTE_PERMISSIONS[path.replace("/api/v2", "")]).toBe("agent-tokens:manage");
  });

  it("verifies a created token until it is deleted, recording last-used-at", async () => {
    const a = await app();
    const created = (await create(a)).json.data;
    const secret: string = created.attributes.token;
    expect(await a.runplane.agentTokens.verify(secret)).toEqual({ tokenId: created.id, agentPoolId: POOL });
    expect((await a.call("GET", token(created.id))).json.data.attributes["last-used-at"]).toMatch(TIMESTAMP);
    expect((await a.call("DELETE", token(created.id))).status).toBe(204);
    expect(await a.runplane.agentTokens.verify(secret)).toBeNull();
  });

  it("never lets the token string be recovered: not from show or list, nor from the database file", async () => {
    const a = await app();
    const description = `canary-description-${Date.now()}`;
    const created = (await create(a, description)).json.data;
    const secret: string = created.attributes.token;
    const secretPart = secret.slice(secret.lastIndexOf(".") + 1);
    expect(await a.runplane.agentTokens.verify(secret)).not.toBeNull();
    await seed(a, 2);

    const reads = [
      await a.call("GET", token(created.id)),
      await a.call("GET", TOKENS),
      await a.call("GET", `${TOKENS}?sort=-created-at&page[size]=1`),
      await a.call("GET", `${TOKENS}?page[number]=2&page[size]=1`),
    ];
    for (const res of reads) {
      expect(res.status).toBe(200);
      for (const needle of [secret, secretPart, sha256Hex(secret)]) expect(res.text).not.toContain(needle);
    }
    expect(reads[0]!.json.data.attributes.token).toBeNull();

    if (file) {
      const files = [file, `${file}-wal`].filter(existsSync);
      const bytes = Buffer.concat(files.map((f) => readFileSync(f)));
      // The scan sees plain text: the description written with the token is in there.
      expect(bytes.includes(Buffer.from(description))).toBe(true);
      expect(bytes.includes(Buffer.from(secretPart))).toBe(false);
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
    }
  });
});
