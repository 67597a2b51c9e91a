import { afterEach, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { STORAGES } from "../helpers/storages.js";

const TP = "/api/v2/team-projects";
const list = (projectId: string, extra = "") => `${TP}?filter%5Bproject%5D%5Bid%5D=${projectId}${extra}`;

const body = (attributes: Record<string, unknown>, relationships?: { project?: string; team?: string }, extra: Record<string, unknown> = {}) => ({
  data: {
    type: "team-projects",
    attributes,
    ...(relationships
      ? {
          relationships: {
            ...(relationships.project ? { project: { data: { type: "projects", id: relationships.project } } } : {}),
            ...(relationships.team ? { team: { data: { type: "teams", id: relationships.team } } } : {}),
          },
        }
      : {}),
    ...extra,
  },
});

const CUSTOM_DEFAULTS = {
  "project-access": { settings: "read", teams: "none", "variable-sets": "none" },
  "workspace-access": {
    runs: "read", "sentinel-mocks": "none", "state-versions": "none", variables: "none",
    create: false, locking: false, delete: false, move: false, "run-tasks": false, "policy-overrides": false,
  },
};

const teamsIn = (res: { json: any }): string[] => res.json.data.map((d: any) => d.relationships.team.data.id).sort();

interface World extends TestApp {
  tokens: { ops: string; manager: string; viewer: string; org: string; lonely: string };
  grant(team: string, attributes: Record<string, unknown>, project?: string): Promise<string>;
}

describe.each(STORAGES)("team access to projects over HTTP ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());

  /**
   * acme: prj-a, prj-b; teams team-devs (user-dev), team-ops (secret, user-ops), team-public
   * (visibility organization, user-viewer), team-managers (user-manager, admin on prj-a), team-lonely
   * (user-lonely, no grants). other: team-foreign.
   */
  const world = async (): Promise<World> => {
    const s = setup.create();
    dispose = s.dispose;
    const a = await createTestApp({ storage: s.storage });
    const d = a.runplane.directory;
    await d.projects.create({ id: "prj-b", name: "beta", organization: "acme" });
    const people = ["user-ops", "user-manager", "user-viewer", "user-lonely"];
    for (const id of people) await d.users.create({ id, username: id });
    await d.teams.create({ id: "team-ops", name: "ops", organization: "acme", visibility: "secret", members: ["user-ops"] });
    await d.teams.create({ id: "team-public", name: "public", organization: "acme", visibility: "organization", members: ["user-viewer"] });
    await d.teams.create({ id: "team-managers", name: "managers", organization: "acme", members: ["user-manager"] });
    await d.teams.create({ id: "team-lonely", name: "lonely", organization: "acme", members: ["user-lonely"] });
    await d.teams.create({ id: "team-foreign", name: "foreign", organization: "other" });
    const userToken = async (userId: string) => (await d.createApiToken({ organization: "acme", kind: "user", userId })).token;
    const tokens = {
      ops: await userToken("user-ops"),
      manager: await userToken("user-manager"),
      viewer: await userToken("user-viewer"),
      lonely: await userToken("user-lonely"),
      org: (await d.createApiToken({ organization: "acme", kind: "organization" })).token,
    };
    await a.runplane.teamProjects.create("prj-a", "team-managers", { access: "admin" });
    const grant = async (team: string, attributes: Record<string, unknown>, project = "prj-a") => {
      const res = await a.call("POST", TP, { body: body(attributes, { project, team }) });
      expect(res.status, JSON.stringify(res.json)).toBe(201);
      return res.json.data.id as string;
    };
    return { ...a, tokens, grant };
  };

  describe("create, show, update, delete", () => {
    it("creates a grant with 201 and writes every attribute, relationship and link", async () => {
      const a = await world();
      const res = await a.call("POST", TP, { body: body({ access: "read" }, { project: "prj-a", team: "team-devs" }) });
      expect(res.status).toBe(201);
      expect(res.headers.get("content-type")).toBe("application/vnd.api+json");
      const data = res.json.data;
      expect(data.type).toBe("team-projects");
      expect(data.id).toMatch(/^tprj-[0-9A-Za-z]{16}$/);
      expect(data.attributes).toStrictEqual({
        access: "read",
        "project-access": { settings: "read", teams: "none", "variable-sets": "none" },
        "workspace-access": {
          runs: "read", "sentinel-mocks": "none", "state-versions": "read", variables: "read",
          create: false, locking: false, delete: false, move: false, "run-tasks": false, "policy-overrides": false,
        },
      });
      expect(data.relationships.project).toStrictEqual({ data: { type: "projects", id: "prj-a" }, links: { related: "/api/v2/projects/prj-a" } });
      expect(data.relationships.team).toStrictEqual({ data: { type: "teams", id: "team-devs" }, links: { related: "/api/v2/teams/team-devs" } });
      expect(data.links.self).toBe(`${TP}/${data.id}`);
      expect((await a.call("GET", `${TP}/${data.id}`)).json).toStrictEqual(res.json);
    });

    it("updates with 200, deletes with 204 and an empty body, then answers 404", async () => {
      const a = await world();
      const id = await a.grant("team-devs", { access: "read" });
      const patched = await a.call("PATCH", `${TP}/${id}`, { body: body({ access: "write" }) });
      expect(patched.status).toBe(200);
      expect(patched.json.data.attributes.access).toBe("write");
      expect((await a.call("GET", `${TP}/${id}`)).json.data.attributes.access).toBe("write");
      const deleted = await a.call("DELETE", `${TP}/${id}`);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe("");
      expect((await a.call("GET", `${TP}/${id}`)).status).toBe(404);
      expect((await a.call("DELETE", `${TP}/${id}`)).status).toBe(404);
      expect((await a.call("PATCH", `${TP}/${id}`, { body: body({ access: "read" }) })).status).toBe(404);
      expect((await a.call("GET", `${TP}/tprj-nonexisting000`)).json).toStrictEqual({ errors: [{ status: "404", title: "not found" }] });
    });

    it("accepts a PATCH without data.id and refuses one whose data.id differs from the path (D23)", async () => {
      const a = await world();
      const id = await a.grant("team-devs", { access: "read" });
      expect((await a.call("PATCH", `${TP}/${id}`, { body: body({ access: "write" }, undefined, { id }) })).status).toBe(200);
      const mismatch = await a.call("PATCH", `${TP}/${id}`, { body: body({ access: "admin" }, undefined, { id: "tprj-other" }) });
      expect(mismatch.status).toBe(409);
      expect(mismatch.json.errors[0].title).toBe("conflict");
      const wrongType = await a.call("PATCH", `${TP}/${id}`, { body: { data: { type: "vars", attributes: { access: "admin" } } } });
      expect(wrongType.status).toBe(422);
      expect((await a.call("GET", `${TP}/${id}`)).json.data.attributes.access).toBe("write");
    });

    it("serves the same resource through the programmatic API", async () => {
      const a = await world();
      const created = await a.runplane.teamProjects.create("prj-a", "team-ops", { access: "custom", "workspace-access": { runs: "plan" } });
      expect(created).toMatchObject({ teamId: "team-ops", projectId: "prj-a", organization: "acme", access: "custom" });
      expect(created.workspaceAccess.runs).toBe("plan");
      expect((await a.call("GET", `${TP}/${created.id}`)).json.data.attributes["workspace-access"].runs).toBe("plan");
      const updated = await a.runplane.teamProjects.update(created.id, { access: "maintain" });
      expect(updated.workspaceAccess).toMatchObject({ runs: "apply", create: true, "runTasks": true });
      expect((await a.runplane.teamProjects.list("prj-a", { teamId: "team-ops" })).items).toStrictEqual([updated]);
      await a.runplane.teamProjects.delete(created.id);
      await expect(a.runplane.teamProjects.get(created.id)).rejects.toMatchObject({ status: 404 });
      await expect(a.runplane.teamProjects.list("prj-a", { page: { offset: 0, limit: 101 } })).rejects.toMatchObject({ status: 422 });
      await expect(a.runplane.teamProjects.list("prj-nope")).rejects.toMatchObject({ status: 404 });
    });

    it("moves updated-at strictly forward on every update, even when the clock stands still", async () => {
      const s = setup.create();
      dispose = s.dispose;
      const a = await createTestApp({ storage: s.storage, clock: () => new Date(Date.UTC(2026, 0, 1)) });
      const grant = await a.runplane.teamProjects.create("prj-a", "team-devs", { access: "read" });
      const stamps = [grant.updatedAt];
      for (const access of ["write", "write", "admin"] as const) stamps.push((await a.runplane.teamProjects.update(grant.id, { access })).updatedAt);
      expect(stamps).toStrictEqual([...stamps].sort());
      expect(new Set(stamps).size).toBe(stamps.length);
      expect((await a.storage.teamProjects.get(grant.id))?.updatedAt).toBe(stamps.at(-1));
    });
  });

  describe("access levels and permissions (D20)", () => {
    // Spec 4.6 in wire names: read, write, maintain, admin.
    const IMPLIED: Record<string, [unknown, unknown, unknown, unknown]> = {
      "project-access.settings": ["read", "read", "read", "delete"],
      "project-access.teams": ["none", "none", "none", "manage"],
      "workspace-access.runs": ["read", "apply", "apply", "apply"],
      "workspace-access.sentinel-mocks": ["none", "read", "read", "read"],
      "workspace-access.state-versions": ["read", "write", "write", "write"],
      "workspace-access.variables": ["read", "write", "write", "write"],
      "workspace-access.create": [false, false, true, true],
      "workspace-access.locking": [false, true, true, true],
      "workspace-access.delete": [false, false, true, true],
      "workspace-access.move": [false, false, false, true],
      "workspace-access.run-tasks": [false, false, true, true],
    };

    it("shows the implied permissions of every fixed level, on create and after a PATCH", async () => {
      const a = await world();
      const id = await a.grant("team-devs", { access: "read" });
      for (const [i, level] of (["read", "write", "maintain", "admin"] as const).entries()) {
        const res = await a.call("PATCH", `${TP}/${id}`, { body: body({ access: level }) });
        const shown = (await a.call("GET", `${TP}/${id}`)).json.data.attributes;
        for (const [path, cells] of Object.entries(IMPLIED)) {
          const [group, name] = path.split(".") as [string, string];
          expect(res.json.data.attributes[group][name], `${level} ${path}`).toBe(cells[i]);
          expect(shown[group][name], `${level} ${path}`).toBe(cells[i]);
        }
      }
    });

    it("refuses permission attributes with a fixed level (422), on create and on update", async () => {
      const a = await world();
      const create = await a.call("POST", TP, {
        body: body({ access: "read", "workspace-access": { runs: "apply" } }, { project: "prj-a", team: "team-devs" }),
      });
      expect(create.status).toBe(422);
      expect(create.json.errors[0]).toMatchObject({ status: "422", title: "invalid attribute", source: { pointer: "/data/attributes/workspace-access" } });
      const id = await a.grant("team-devs", { access: "write" });
      const patch = await a.call("PATCH", `${TP}/${id}`, { body: body({ "project-access": { settings: "update" } }) });
      expect(patch.status).toBe(422);
      expect(patch.json.errors[0].source.pointer).toBe("/data/attributes/project-access");
      const toFixed = await a.call("PATCH", `${TP}/${id}`, { body: body({ access: "admin", "workspace-access": { move: true } }) });
      expect(toFixed.status).toBe(422);
      expect((await a.call("GET", `${TP}/${id}`)).json.data.attributes.access).toBe("write");
    });

    it("accepts empty permission objects with a fixed level: they name nothing", async () => {
      const a = await world();
      const res = await a.call("POST", TP, {
        body: body({ access: "maintain", "project-access": {}, "workspace-access": {} }, { project: "prj-a", team: "team-devs" }),
      });
      expect(res.status).toBe(201);
      expect(res.json.data.attributes["workspace-access"].create).toBe(true);
    });

    it("fills the custom defaults for a custom grant and keeps the permissions sent", async () => {
      const a = await world();
      const bare = await a.call("POST", TP, { body: body({ access: "custom" }, { project: "prj-a", team: "team-devs" }) });
      expect(bare.json.data.attributes).toStrictEqual({ access: "custom", ...CUSTOM_DEFAULTS });
      const id = await a.grant("team-ops", {
        access: "custom",
        "project-access": { teams: "read", "variable-sets": "read" },
        "workspace-access": { runs: "plan", "state-versions": "read-outputs", locking: true, "policy-overrides": true },
      });
      const shown = (await a.call("GET", `${TP}/${id}`)).json.data.attributes;
      expect(shown["project-access"]).toStrictEqual({ settings: "read", teams: "read", "variable-sets": "read" });
      expect(shown["workspace-access"]).toStrictEqual({
        ...CUSTOM_DEFAULTS["workspace-access"], runs: "plan", "state-versions": "read-outputs", locking: true, "policy-overrides": true,
      });
    });

    it("keeps unnamed permissions on a custom-to-custom PATCH", async () => {
      const a = await world();
      const id = await a.grant("team-devs", { access: "custom", "workspace-access": { runs: "apply", variables: "write" } });
      const res = await a.call("PATCH", `${TP}/${id}`, { body: body({ "workspace-access": { variables: "read" }, "project-access": { settings: "update" } }) });
      expect(res.status).toBe(200);
      expect(res.json.data.attributes["workspace-access"]).toMatchObject({ runs: "apply", variables: "read" });
      expect(res.json.data.attributes["project-access"].settings).toBe("update");
      const again = await a.call("PATCH", `${TP}/${id}`, { body: body({ access: "custom", "workspace-access": { locking: true } }) });
      expect(again.json.data.attributes["workspace-access"]).toMatchObject({ runs: "apply", variables: "read", locking: true });
    });

    it("starts a switch from a fixed level to custom from the custom defaults", async () => {
      const a = await world();
      const id = await a.grant("team-devs", { access: "admin" });
      const res = await a.call("PATCH", `${TP}/${id}`, { body: body({ access: "custom", "workspace-access": { runs: "plan" } }) });
      expect(res.json.data.attributes).toStrictEqual({
        access: "custom",
        "project-access": CUSTOM_DEFAULTS["project-access"],
        "workspace-access": { ...CUSTOM_DEFAULTS["workspace-access"], runs: "plan" },
      });
      const back = await a.call("PATCH", `${TP}/${id}`, { body: body({ access: "read" }) });
      expect(back.json.data.attributes["workspace-access"]).toMatchObject({ runs: "read", variables: "read", "state-versions": "read" });
    });
  });

  describe("validation", () => {
    const expect422 = async (a: World, payload: unknown, pointer: string) => {
      const res = await a.call("POST", TP, { body: payload });
      expect(res.status, JSON.stringify(res.json)).toBe(422);
      expect(res.json.errors[0]).toMatchObject({ status: "422", title: "invalid attribute", source: { pointer } });
      return res;
    };
    const rel = { project: "prj-a", team: "team-devs" };

    it("answers 422 for missing attributes, unknown enum values and wrong types", async () => {
      const a = await world();
      await expect422(a, body({}, rel), "/data/attributes/access");
      await expect422(a, body({ access: "owner" }, rel), "/data/attributes/access");
      await expect422(a, body({ access: 5 }, rel), "/data/attributes/access");
      await expect422(a, body({ access: "custom", "project-access": { teams: "write" } }, rel), "/data/attributes/project-access/teams");
      await expect422(a, body({ access: "custom", "workspace-access": { create: "yes" } }, rel), "/data/attributes/workspace-access/create");
      await expect422(a, body({ access: "custom", "workspace-access": { run_tasks: true } }, rel), "/data/attributes/workspace-access/run_tasks");
      await expect422(a, body({ access: "custom", "workspace-access": "all" }, rel), "/data/attributes/workspace-access");
      expect((await a.runplane.teamProjects.list("prj-a")).total).toBe(1); // the managers' grant only
    });

    it("answers 422 for a malformed envelope or relationships", async () => {
      const a = await world();
      await expect422(a, { data: { type: "teams", attributes: { access: "read" } } }, "/data/type");
      await expect422(a, [], "/data");
      await expect422(a, body({ access: "read" }), "/data/relationships/project");
      await expect422(a, body({ access: "read" }, { project: "prj-a" }), "/data/relationships/team");
      await expect422(
        a,
        { data: { type: "team-projects", attributes: { access: "read" }, relationships: { project: { data: { type: "workspaces", id: "prj-a" } }, team: { data: { type: "teams", id: "team-devs" } } } } },
        "/data/relationships/project/data/type",
      );
      await expect422(
        a,
        { data: { type: "team-projects", attributes: { access: "read" }, relationships: { project: { data: { type: "projects", id: 7 } }, team: { data: { type: "teams", id: "team-devs" } } } } },
        "/data/relationships/project/data/id",
      );
    });

    it("answers 422 Team has already been taken for a second grant of the pair", async () => {
      const a = await world();
      await a.grant("team-devs", { access: "read" });
      const res = await expect422(a, body({ access: "admin" }, rel), "/data/relationships/team");
      expect(res.json.errors[0].detail).toBe("Team has already been taken");
    });

    it("answers a team of another organization exactly like an unknown team: 404 with the same body (D5a)", async () => {
      const a = await world();
      const before = (await a.call("GET", list("prj-a"))).json.data;
      const foreign = await a.call("POST", TP, { body: body({ access: "read" }, { project: "prj-a", team: "team-foreign" }) });
      const unknown = await a.call("POST", TP, { body: body({ access: "read" }, { project: "prj-a", team: "team-nope" }) });
      expect(foreign.status).toBe(404);
      expect(foreign.text).toBe(unknown.text);
      expect((await a.call("POST", TP, { body: body({ access: "read" }, { project: "prj-nope", team: "team-devs" }) })).status).toBe(404);
      expect((await a.call("GET", list("prj-a"))).json.data).toStrictEqual(before);
    });
  });

  describe("list", () => {
    it("requires filter[project][id] (400) and answers 404 for an unknown project", async () => {
      const a = await world();
      const missing = await a.call("GET", TP);
      expect(missing.status).toBe(400);
      expect(missing.json.errors[0]).toMatchObject({ status: "400", title: "bad request", source: { parameter: "filter[project][id]" } });
      expect((await a.call("GET", `${TP}?filter%5Bproject%5D%5Bid%5D=`)).status).toBe(400);
      expect((await a.call("GET", list("prj-nope"))).status).toBe(404);
    });

    it("pages oldest first with meta.pagination and links, and answers a page past the end with no data", async () => {
      const a = await world();
      for (const team of ["team-devs", "team-ops", "team-public"]) await a.grant(team, { access: "read" });
      const first = await a.call("GET", list("prj-a", "&page%5Bsize%5D=2"));
      expect(first.status).toBe(200);
      expect(first.json.data.map((d: any) => d.relationships.team.data.id)).toStrictEqual(["team-managers", "team-devs"]);
      expect(first.json.meta.pagination).toStrictEqual({
        "current-page": 1, "page-size": 2, "prev-page": null, "next-page": 2, "total-pages": 2, "total-count": 4,
      });
      expect(first.json.links.next).toBe("http://localhost:8080/api/v2/team-projects?filter%5Bproject%5D%5Bid%5D=prj-a&page%5Bnumber%5D=2&page%5Bsize%5D=2");
      const second = await a.call("GET", list("prj-a", "&page%5Bnumber%5D=2&page%5Bsize%5D=2"));
      expect(second.json.data.map((d: any) => d.relationships.team.data.id)).toStrictEqual(["team-ops", "team-public"]);
      const past = await a.call("GET", list("prj-a", "&page%5Bnumber%5D=999"));
      expect(past.status).toBe(200);
      expect(past.json.data).toStrictEqual([]);
      expect(past.json.meta.pagination).toMatchObject({ "current-page": 999, "total-count": 4 });
      const defaults = await a.call("GET", list("prj-a"));
      expect(defaults.json.meta.pagination).toMatchObject({ "current-page": 1, "page-size": 20, "total-count": 4 });
      expect((await a.call("GET", list("prj-a", "&page%5Bsize%5D=101"))).status).toBe(422);
      expect((await a.call("GET", list("prj-b"))).json.data).toStrictEqual([]);
    });

    it("filters by filter[team][id]", async () => {
      const a = await world();
      const id = await a.grant("team-ops", { access: "read" });
      await a.grant("team-devs", { access: "read" });
      const res = await a.call("GET", list("prj-a", "&filter%5Bteam%5D%5Bid%5D=team-ops"));
      expect(res.json.data.map((d: any) => d.id)).toStrictEqual([id]);
      expect(res.json.meta.pagination["total-count"]).toBe(1);
      expect((await a.call("GET", list("prj-a", "&filter%5Bteam%5D%5Bid%5D=team-nope"))).json.data).toStrictEqual([]);
    });
  });

  describe("visibility and who may change access (D21, D4)", () => {
    it("shows members only their own teams' grants, secret teams included", async () => {
      const a = await world();
      const devs = await a.grant("team-devs", { access: "read" });
      const ops = await a.grant("team-ops", { access: "write" });
      const pub = await a.grant("team-public", { access: "read" });
      expect(teamsIn(await a.call("GET", list("prj-a"), { token: a.devToken }))).toStrictEqual(["team-devs"]);
      expect(teamsIn(await a.call("GET", list("prj-a"), { token: a.tokens.ops }))).toStrictEqual(["team-ops"]);
      expect((await a.call("GET", `${TP}/${ops}`, { token: a.tokens.ops })).status).toBe(200);
      expect((await a.call("GET", `${TP}/${devs}`, { token: a.devToken })).status).toBe(200);
      // another secret team's grant, and an organization-visible team's grant, are missing to a non-member
      expect((await a.call("GET", `${TP}/${ops}`, { token: a.devToken })).status).toBe(404);
      expect((await a.call("GET", `${TP}/${pub}`, { token: a.devToken })).status).toBe(404);
      const filtered = await a.call("GET", list("prj-a", "&filter%5Bteam%5D%5Bid%5D=team-ops"), { token: a.devToken });
      expect(filtered.json.data).toStrictEqual([]);
      expect(filtered.json.meta.pagination["total-count"]).toBe(0);
    });

    it("lets owners, organization tokens and project team managers see every grant", async () => {
      const a = await world();
      for (const team of ["team-devs", "team-ops", "team-public"]) await a.grant(team, { access: "read" });
      const all = ["team-devs", "team-managers", "team-ops", "team-public"];
      for (const token of [a.ownerToken, a.tokens.org, a.tokens.manager]) {
        expect(teamsIn(await a.call("GET", list("prj-a"), { token }))).toStrictEqual(all);
      }
    });

    it("answers 404 to members without access to the project, and to other organizations", async () => {
      const a = await world();
      const id = await a.grant("team-devs", { access: "read" });
      expect((await a.call("GET", list("prj-a"), { token: a.tokens.lonely })).status).toBe(404);
      expect((await a.call("GET", `${TP}/${id}`, { token: a.tokens.lonely })).status).toBe(404);
      expect((await a.call("GET", list("prj-b"), { token: a.devToken })).status).toBe(404);
      for (const [method, path] of [["GET", list("prj-a")], ["GET", `${TP}/${id}`], ["DELETE", `${TP}/${id}`]] as const) {
        expect((await a.call(method, path, { token: a.otherOrgToken })).status).toBe(404);
      }
      const patch = await a.call("PATCH", `${TP}/${id}`, { token: a.otherOrgToken, body: body({ access: "admin" }) });
      expect(patch.status).toBe(404);
      const post = await a.call("POST", TP, { token: a.otherOrgToken, body: body({ access: "read" }, { project: "prj-a", team: "team-foreign" }) });
      expect(post.status).toBe(404);
      expect((await a.call("GET", `${TP}/${id}`)).json.data.attributes.access).toBe("read");
    });

    it("answers 404 to members who may not manage team access, on every write", async () => {
      const a = await world();
      const own = await a.grant("team-devs", { access: "maintain" });
      const ops = await a.grant("team-ops", { access: "read" });
      for (const id of [own, ops]) {
        expect((await a.call("PATCH", `${TP}/${id}`, { token: a.devToken, body: body({ access: "admin" }) })).status).toBe(404);
        expect((await a.call("DELETE", `${TP}/${id}`, { token: a.devToken })).status).toBe(404);
      }
      const post = await a.call("POST", TP, { token: a.devToken, body: body({ access: "read" }, { project: "prj-a", team: "team-public" }) });
      expect(post.status).toBe(404);
      // even a malformed body answers 404 before validation, so nothing is learnt about the project
      expect((await a.call("PATCH", `${TP}/${own}`, { token: a.devToken, body: { nope: true } })).status).toBe(404);
      expect((await a.call("GET", `${TP}/${own}`)).json.data.attributes.access).toBe("maintain");
    });

    it("lets a principal with project-access.teams = manage create, update and delete any grant of the project", async () => {
      const a = await world();
      const token = a.tokens.manager;
      const created = await a.call("POST", TP, { token, body: body({ access: "read" }, { project: "prj-a", team: "team-ops" }) });
      expect(created.status).toBe(201);
      const id = created.json.data.id;
      expect((await a.call("GET", `${TP}/${id}`, { token })).status).toBe(200);
      expect((await a.call("PATCH", `${TP}/${id}`, { token, body: body({ access: "write" }) })).status).toBe(200);
      expect((await a.call("DELETE", `${TP}/${id}`, { token })).status).toBe(204);
      // on a project where the managers' team has no grant, it is a stranger
      expect((await a.call("POST", TP, { token, body: body({ access: "read" }, { project: "prj-b", team: "team-ops" }) })).status).toBe(404);
    });

    it("lets a custom grant with teams = manage manage access, and loses it when downgraded", async () => {
      const a = await world();
      const own = await a.grant("team-devs", { access: "custom", "project-access": { teams: "manage" } });
      expect((await a.call("POST", TP, { token: a.devToken, body: body({ access: "read" }, { project: "prj-a", team: "team-ops" }) })).status).toBe(201);
      expect((await a.call("PATCH", `${TP}/${own}`, { token: a.devToken, body: body({ access: "read" }) })).status).toBe(200);
      expect(teamsIn(await a.call("GET", list("prj-a"), { token: a.devToken }))).toStrictEqual(["team-devs"]);
      expect((await a.call("PATCH", `${TP}/${own}`, { token: a.devToken, body: body({ access: "admin" }) })).status).toBe(404);
    });

    it("treats the manage-projects organization permission as admin on every project (D19)", async () => {
      const a = await world();
      await a.runplane.directory.teams.update("team-lonely", { orgPermissions: ["manage-projects"] });
      const res = await a.call("POST", TP, { token: a.tokens.lonely, body: body({ access: "write" }, { project: "prj-b", team: "team-ops" }) });
      expect(res.status).toBe(201);
      expect(teamsIn(await a.call("GET", list("prj-a"), { token: a.tokens.lonely }))).toStrictEqual(["team-managers"]);
    });
  });

  describe("directory deletions", () => {
    it("removes a deleted team's and a deleted project's grants", async () => {
      const a = await world();
      const ops = await a.grant("team-ops", { access: "read" });
      await a.grant("team-ops", { access: "read" }, "prj-b");
      const devsOnB = await a.grant("team-devs", { access: "read" }, "prj-b");
      await a.runplane.directory.teams.delete("team-ops");
      expect((await a.call("GET", `${TP}/${ops}`)).status).toBe(404);
      expect(teamsIn(await a.call("GET", list("prj-b")))).toStrictEqual(["team-devs"]);
      // a team recreated under the same id starts without grants
      await a.runplane.directory.teams.create({ id: "team-ops", name: "ops again", organization: "acme" });
      expect(teamsIn(await a.call("GET", list("prj-a")))).toStrictEqual(["team-managers"]);
      await a.runplane.directory.projects.delete("prj-b");
      expect((await a.call("GET", `${TP}/${devsOnB}`)).status).toBe(404);
      expect((await a.storage.teamProjects.get(devsOnB))).toBeNull();
    });
  });
});
