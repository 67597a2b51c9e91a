import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors.js";
import { createTestApp, varsBody } from "../helpers/app.js";

// decision D41: the owners team is the team marked `owners`, never a team that is named "owners",
// and a name is one team's per organization (found from outside: a host that created a second
// "owners" team granted owner rights by a name).

describe("the owners team is a property, team names unique per organization (D41)", () => {
  const setup = async () => {
    const a = await createTestApp();
    const d = a.runplane.directory;
    await d.organizations.create({ name: "third" });
    await d.projects.create({ id: "prj-3", name: "p3", organization: "third" });
    await d.workspaces.create({ id: "ws-3", name: "w3", organization: "third", projectId: "prj-3" });
    await d.users.create({ id: "user-x", username: "x" });
    const tokenOf = async (teamId: string) => (await d.createApiToken({ organization: "third", kind: "team", teamId })).token;
    const createVar = (token: string, key: string) => a.call("POST", "/api/v2/workspaces/ws-3/vars", { token, body: varsBody({ key, value: "v", category: "env" }) });
    return { a, d, tokenOf, createVar };
  };

  it("gives a team named owners no owner rights, and a team marked owners all of them whatever its name", async () => {
    const { d, tokenOf, createVar } = await setup();
    await d.teams.create({ id: "team-named", name: "owners", organization: "third", members: ["user-x"] });
    await d.teams.create({ id: "team-admins", name: "admins", organization: "third", owners: true });
    expect((await createVar(await tokenOf("team-named"), "by_name")).status).toBe(404);
    expect((await createVar(await tokenOf("team-admins"), "by_property")).status).toBe(201);
  });

  it("refuses a second team of one name in an organization with 409, on create and on rename; another organization may use it", async () => {
    const { d } = await setup();
    await d.teams.create({ id: "team-1", name: "release", organization: "third" });
    const conflict = await d.teams.create({ id: "team-2", name: "release", organization: "third", owners: true }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ApiError);
    expect((conflict as ApiError).status).toBe(409);
    expect((conflict as ApiError).message).toMatch(/team name "?release"? is taken in organization "?third/);
    expect(await d.teams.get("team-2")).toBeNull();
    await d.teams.create({ id: "team-3", name: "other", organization: "third" });
    const renamed = await d.teams.update("team-3", { name: "release" }).catch((e: unknown) => e);
    expect((renamed as ApiError).status).toBe(409);
    expect((await d.teams.get("team-3"))?.name).toBe("other");
    await expect(d.teams.create({ id: "team-4", name: "release", organization: "acme" })).resolves.toMatchObject({ owners: false });
  });
});
