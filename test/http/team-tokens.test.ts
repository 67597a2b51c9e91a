import { describe, expect, it } from "vitest";
import { REVOKED_TOKEN_DESCRIPTION } from "../../src/services/principals.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

const OWNERS = "/api/v2/teams/team-owners/authentication-tokens";
const token = (id: string) => `/api/v2/authentication-tokens/${id}`;
const VARS = "/api/v2/workspaces/ws-a/vars";

/** A team token of `teamId` in acme, as the host issues it. */
const issue = async (a: TestApp, teamId: string, description: string) =>
  a.runplane.directory.createApiToken({ organization: "acme", kind: "team", teamId, description });

/** Team API tokens listed, shown and revoked over HCP Terraform's team tokens API. */
describe("team API tokens over HTTP", () => {
  it("lists a team's tokens to owners, oldest first, metadata only, paged", async () => {
    const a = await createTestApp();
    const first = await issue(a, "team-owners", "ADMIN_TOKEN");
    const second = await issue(a, "team-owners", "ci");
    await issue(a, "team-devs", "devs");
    await a.call("GET", VARS, { token: second.token });
    const res = await a.call("GET", OWNERS);
    expect(res.status).toBe(200);
    expect(res.json.data.map((d: any) => d.id)).toStrictEqual([first.id, second.id]);
    const [one, two] = res.json.data;
    expect(one.type).toBe("authentication-tokens");
    expect(one.attributes).toMatchObject({ description: "ADMIN_TOKEN", token: null, "expired-at": null, "last-used-at": null });
    expect(two.attributes["last-used-at"]).toMatch(/Z$/);
    expect(one.relationships.team).toStrictEqual({ data: { type: "teams", id: "team-owners" } });
    // Never the secret, nor its digest.
    expect(res.text).not.toContain(first.token);
    expect(res.text).not.toMatch(/[0-9a-f]{64}/);
    expect(res.json.meta.pagination).toMatchObject({ "current-page": 1, "total-count": 2 });
    const paged = await a.call("GET", `${OWNERS}?page%5Bsize%5D=1&page%5Bnumber%5D=2`);
    expect(paged.json.data.map((d: any) => d.id)).toStrictEqual([second.id]);
    expect(paged.json.meta.pagination).toMatchObject({ "current-page": 2, "total-count": 2, "total-pages": 2 });
  });

  it("never lets a revoked token's record authenticate, whoever knows its secret", async () => {
    const a = await createTestApp();
    const mark = await a.runplane.directory.createApiToken({ organization: "acme", kind: "team", teamId: "team-owners", secret: "revoked ADMIN_TOKEN 00", description: REVOKED_TOKEN_DESCRIPTION });
    expect((await a.call("GET", VARS, { token: mark.token })).status).toBe(401);
    expect(await a.runplane.auth.sessions.create(mark.token, 60_000)).toBeNull();
  });

  it("lists a results page session with the time it ends as expired-at", async () => {
    const a = await createTestApp();
    const team = await issue(a, "team-owners", "signs in");
    const session = await a.runplane.auth.sessions.create(team.token, 60_000);
    const listed = (await a.call("GET", "/api/v2/teams/team-owners/authentication-tokens")).json.data;
    const mine = listed.find((d: any) => d.attributes.description.startsWith("results page session"));
    expect(mine.attributes["expired-at"]).toBe(session!.expiresAt);
  });

  it("shows one API token to owners at /authentication-tokens/:id, where agent tokens still answer", async () => {
    const a = await createTestApp();
    const ci = await issue(a, "team-devs", "ci");
    const res = await a.call("GET", token(ci.id));
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ id: ci.id, type: "authentication-tokens", attributes: { description: "ci", token: null } });
    expect(res.json.data.relationships.team.data).toStrictEqual({ type: "teams", id: "team-devs" });
    await a.runplane.directory.agentPools.create({ id: "apool-a", name: "pool", organization: "acme" });
    const agent = await a.runplane.agentTokens.create("apool-a", { description: "agents", createdBy: { type: "organizations", id: "acme" } });
    expect((await a.call("GET", token(agent.id))).json.data.attributes.description).toBe("agents");
    expect((await a.call("DELETE", token(agent.id))).status).toBe(204);
    expect((await a.call("GET", token(agent.id))).status).toBe(404);
  });

  it("revokes with 204: the very next request with the token is 401, and it is listed no more", async () => {
    const a = await createTestApp();
    const ci = await issue(a, "team-owners", "ci");
    // Warm the access cache for the token first: revocation must not wait for it.
    expect((await a.call("GET", VARS, { token: ci.token })).status).toBe(200);
    expect((await a.call("DELETE", token(ci.id))).status).toBe(204);
    expect((await a.call("GET", VARS, { token: ci.token })).status).toBe(401);
    expect((await a.call("GET", token(ci.id))).status).toBe(404);
    expect((await a.call("DELETE", token(ci.id))).status).toBe(404);
    expect((await a.call("GET", OWNERS)).json.data).toStrictEqual([]);
  });

  it("answers 404 to anyone short of owners, with manage-agent-pools too, and revokes nothing", async () => {
    const a = await createTestApp();
    await a.runplane.directory.teams.update("team-devs", { orgPermissions: ["manage-agent-pools"] });
    const ci = await issue(a, "team-owners", "ci");
    const missing = await a.call("GET", token("at-0000000000000000"), { token: a.devToken });
    for (const [method, path] of [["GET", OWNERS], ["GET", token(ci.id)], ["DELETE", token(ci.id)]] as const) {
      const res = await a.call(method, path, { token: a.devToken });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json).toStrictEqual(missing.json);
    }
    expect((await a.call("GET", VARS, { token: ci.token })).status).toBe(200);
  });

  it("answers another organization's owners 404 for acme's tokens and teams, like an id that does not exist", async () => {
    const a = await createTestApp();
    const ci = await issue(a, "team-owners", "ci");
    const missing = await a.call("GET", token("at-0000000000000000"), { token: a.otherOrgToken });
    expect(missing.status).toBe(404);
    for (const [method, path] of [["GET", OWNERS], ["GET", token(ci.id)], ["DELETE", token(ci.id)]] as const) {
      const res = await a.call(method, path, { token: a.otherOrgToken });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json).toStrictEqual(missing.json);
    }
    expect((await a.call("GET", "/api/v2/teams/team-nope/authentication-tokens")).status).toBe(404);
    expect((await a.call("GET", VARS, { token: ci.token })).status).toBe(200);
  });

  it("lets owners revoke their own token: their next request is 401", async () => {
    const a = await createTestApp();
    const self = await issue(a, "team-owners", "self");
    expect((await a.call("DELETE", token(self.id), { token: self.token })).status).toBe(204);
    expect((await a.call("GET", OWNERS, { token: self.token })).status).toBe(401);
  });
});
