import { afterEach, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";

// A directory record deleted and created again under the same id starts empty: nothing of the old
// one (variables, policy set parameters, team access) is inherited (issue 16).

let a: TestApp;
afterEach(async () => a?.runplane.close());

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
    const grant = {
      data: {
        type: "team-projects",
        attributes: { access: "write" },
        relationships: { project: { data: { type: "projects", id: "prj-a" } }, team: { data: { type: "teams", id: "team-devs" } } },
      },
    };
    expect((await a.call("POST", "/api/v2/team-projects", { body: grant })).status).toBe(201);
    expect((await a.call("GET", "/api/v2/workspaces/ws-a/vars", { token: a.devToken })).status).toBe(200);
    expect(await a.runplane.directory.teams.delete("team-devs")).toBe(true);
    await a.runplane.directory.teams.create({ id: "team-devs", name: "devs", organization: "acme", members: ["user-dev"] });
    expect((await a.call("GET", "/api/v2/team-projects?filter%5Bproject%5D%5Bid%5D=prj-a")).json.data).toStrictEqual([]);
    expect((await a.call("GET", "/api/v2/workspaces/ws-a/vars", { token: a.devToken })).status).toBe(404);
  });
});
