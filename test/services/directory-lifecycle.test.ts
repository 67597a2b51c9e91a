import { afterEach, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";

// A directory record deleted and created again under the same id starts empty: nothing of the old
// one (variables, policy set parameters, team access) is inherited.

let a: TestApp;
afterEach(async () => a?.runplane.close());

/** A team-projects create: `team-devs` gets write access to `prj-a`. */
const DEVS_WRITE_ON_PRJ_A = {
  data: {
    type: "team-projects",
    attributes: { access: "write" },
    relationships: { project: { data: { type: "projects", id: "prj-a" } }, team: { data: { type: "teams", id: "team-devs" } } },
  },
};

const VAR = { data: { type: "vars", attributes: { key: "secret", value: "s3cr3t", category: "env", sensitive: true } } };

describe("directory lifecycle", () => {
  it("gives a workspace recreated with the same id none of the old one's variables", async () => {
    a = await createTestApp();
    expect((await a.call("POST", "/api/v2/workspaces/ws-a/vars", { body: VAR })).status).toBe(201);
    expect(await a.runplane.directory.workspaces.delete("ws-a")).toBe(true);
    await a.runplane.directory.workspaces.create({ id: "ws-a", name: "alpha-ws", organization: "acme", projectId: "prj-a" });
    expect((await a.call("GET", "/api/v2/workspaces/ws-a/vars")).json.data).toStrictEqual([]);
    expect(await a.runplane.variables.resolveForRun("ws-a")).toStrictEqual([]);
  });

  it("gives a policy set recreated with the same id none of the old one's parameters", async () => {
    a = await createTestApp();
    const param = { data: { type: "vars", attributes: { key: "limit", value: "10", category: "policy-set" } } };
    expect((await a.call("POST", "/api/v2/policy-sets/polset-a/parameters", { body: param })).status).toBe(201);
    expect(await a.runplane.directory.policySets.delete("polset-a")).toBe(true);
    await a.runplane.directory.policySets.create({ id: "polset-a", name: "guardrails", organization: "acme" });
    expect((await a.call("GET", "/api/v2/policy-sets/polset-a/parameters")).json.data).toStrictEqual([]);
  });

  it("gives a team recreated with the same id none of the old one's project access", async () => {
    a = await createTestApp();
    expect((await a.call("POST", "/api/v2/team-projects", { body: DEVS_WRITE_ON_PRJ_A })).status).toBe(201);
    expect((await a.call("GET", "/api/v2/workspaces/ws-a/vars", { token: a.devToken })).status).toBe(200);
    expect(await a.runplane.directory.teams.delete("team-devs")).toBe(true);
    await a.runplane.directory.teams.create({ id: "team-devs", name: "devs", organization: "acme", members: ["user-dev"] });
    expect((await a.call("GET", "/api/v2/team-projects?filter%5Bproject%5D%5Bid%5D=prj-a")).json.data).toStrictEqual([]);
    expect((await a.call("GET", "/api/v2/workspaces/ws-a/vars", { token: a.devToken })).status).toBe(404);
  });
});

describe("directory updates", () => {
  it("updates a workspace's fields but never its id or organization, and 404s an unknown one", async () => {
    a = await createTestApp();
    const d = a.runplane.directory;
    const updated = await d.workspaces.update("ws-a", { name: "renamed", workingDirectory: "infra", organization: "other" } as never);
    expect(updated).toMatchObject({ id: "ws-a", name: "renamed", workingDirectory: "infra", organization: "acme" });
    expect(await d.workspaces.get("ws-a")).toStrictEqual(updated);
    await expect(d.workspaces.update("ws-nope", { name: "x" })).rejects.toMatchObject({ status: 404 });
    await expect(d.workspaces.update("ws-a", { name: "" })).rejects.toMatchObject({ status: 422 });
    expect((await d.workspaces.get("ws-a"))?.name).toBe("renamed");
  });

  it("moves a team's members, and with them what its members may do", async () => {
    a = await createTestApp();
    const d = a.runplane.directory;
    expect((await a.call("POST", "/api/v2/team-projects", { body: DEVS_WRITE_ON_PRJ_A })).status).toBe(201);
    expect((await a.call("GET", "/api/v2/workspaces/ws-a/vars", { token: a.devToken })).status).toBe(200);
    await d.teams.update("team-devs", { members: [] });
    expect((await a.call("GET", "/api/v2/workspaces/ws-a/vars", { token: a.devToken })).status).toBe(404);
    await d.teams.update("team-devs", { members: ["user-dev"] });
    expect((await a.call("GET", "/api/v2/workspaces/ws-a/vars", { token: a.devToken })).status).toBe(200);
  });

  it("updates organizations and users in place, and 404s unknown ones", async () => {
    a = await createTestApp();
    const d = a.runplane.directory;
    expect(await d.organizations.update("acme", { email: "ops@acme.example" })).toStrictEqual({ name: "acme", email: "ops@acme.example" });
    expect(await d.organizations.get("acme")).toStrictEqual({ name: "acme", email: "ops@acme.example" });
    await expect(d.organizations.update("nope", { email: null })).rejects.toMatchObject({ status: 404 });
    expect(await d.users.update("user-dev", { username: "developer" })).toMatchObject({ id: "user-dev", username: "developer" });
    expect((await d.users.get("user-dev"))?.username).toBe("developer");
    await expect(d.users.update("user-nope", { username: "x" })).rejects.toMatchObject({ status: 404 });
    expect(await d.users.delete("user-dev")).toBe(true);
    expect(await d.users.get("user-dev")).toBeNull();
  });
});
