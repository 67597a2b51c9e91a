import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { generateKey, silentLogger, createKeyring } from "../../src/index.js";
import { newId } from "../../src/crypto/random.js";
import { isAction, isOrganizationAction } from "../../src/domain/permissions.js";
import { ROUTE_ACTIONS, ROUTE_PERMISSIONS } from "../../src/http/route-permissions.js";
import type { Principal } from "../../src/schemas/common.js";
import { createAuthorizer, isAuthorizerAction } from "../../src/services/authorizer.js";
import type { ServiceContext } from "../../src/services/context.js";
import { createServices } from "../../src/services/index.js";
import { createKeyringControl } from "../../src/services/keyring-control.js";
import { createTestApp } from "../helpers/app.js";

async function setup() {
  const storage = createMemoryStorage();
  const keyring = createKeyring({ keys: [{ id: "k", key: generateKey() }] });
  const debug: Record<string, unknown>[] = [];
  const ctx: ServiceContext = {
    storage,
    keyring,
    keys: createKeyringControl(keyring, storage, silentLogger),
    logger: { ...silentLogger, debug: (_m, fields) => void debug.push(fields ?? {}) },
    dialect: "default",
    now: () => new Date(Date.UTC(2026, 0, 1)),
    newId,
  };
  const { directory: d, teamProjects } = createServices(ctx);
  await d.organizations.create({ name: "acme" });
  await d.organizations.create({ name: "other" });
  await d.projects.create({ id: "prj-a", name: "a", organization: "acme" });
  await d.projects.create({ id: "prj-x", name: "x", organization: "other" });
  await d.workspaces.create({ id: "ws-a", name: "a", organization: "acme", projectId: "prj-a" });
  await d.teams.create({ id: "team-devs", name: "devs", organization: "acme", members: ["user-dev"] });
  await d.teams.create({ id: "team-policy", name: "policy", organization: "acme", orgPermissions: ["manage-policies"], members: ["user-pol"] });
  await d.teams.create({ id: "team-x", name: "x", organization: "other", members: ["user-dev"] });
  return { ctx, authorize: createAuthorizer(ctx), teamProjects, debug };
}

const principal = (overrides: Partial<Principal> = {}): Principal => ({
  organization: "acme",
  kind: "user",
  userId: "user-dev",
  teamIds: ["team-devs"],
  isOwner: false,
  orgPermissions: [],
  ...overrides,
});
const owner = principal({ isOwner: true, teamIds: [] });
const ACME_A = { organization: "acme", projectId: "prj-a" };

describe("the route-permission table (D21)", () => {
  it("names only actions the authorizer understands", () => {
    for (const action of ROUTE_ACTIONS) expect(isAuthorizerAction(action), action).toBe(true);
    for (const action of Object.values(ROUTE_PERMISSIONS)) expect(ROUTE_ACTIONS as readonly string[]).toContain(action);
  });

  it("has an entry for every route createRunplane serves", async () => {
    const { runplane } = await createTestApp({ basePath: "/custom/base" });
    expect(runplane.routes.length).toBeGreaterThan(0);
    const missing = runplane.routes
      .map((r) => `${r.method} ${r.path.slice("/custom/base".length)}`)
      .filter((key) => !(key in ROUTE_PERMISSIONS));
    expect(missing).toStrictEqual([]);
  });

  it("grants an owner every action in the table and a principal of another organization none but public", async () => {
    const { authorize } = await setup();
    const stranger = principal({ organization: "other", teamIds: ["team-x"], isOwner: true });
    for (const action of ROUTE_ACTIONS) {
      expect(await authorize(owner, action, { ...ACME_A, workspaceId: "ws-a" }), action).toBe(true);
      expect(await authorize(stranger, action, { ...ACME_A, workspaceId: "ws-a" }), action).toBe(action === "public");
    }
  });
});

describe("createAuthorizer", () => {
  it("decides project actions from the principal's teams' grants", async () => {
    const { authorize, teamProjects } = await setup();
    const dev = principal();
    expect(await authorize(dev, "variables:read", ACME_A)).toBe(false);
    const grant = await teamProjects.create("prj-a", "team-devs", { access: "read" });
    expect(await authorize(dev, "variables:read", ACME_A)).toBe(true);
    expect(await authorize(dev, "variables:write", ACME_A)).toBe(false);
    await teamProjects.update(grant.id, { access: "write" });
    expect(await authorize(dev, "variables:write", ACME_A)).toBe(true);
    expect(await authorize(dev, "team-access:manage", ACME_A)).toBe(false);
  });

  it("finds the project of a workspace target", async () => {
    const { authorize, teamProjects } = await setup();
    await teamProjects.create("prj-a", "team-devs", { access: "read" });
    expect(await authorize(principal(), "variables:read", { organization: "acme", workspaceId: "ws-a" })).toBe(true);
    expect(await authorize(principal(), "variables:read", { organization: "acme", workspaceId: "ws-nope" })).toBe(false);
  });

  it("ignores grants of teams the principal is not on, and teams of another organization", async () => {
    const { authorize, teamProjects } = await setup();
    await teamProjects.create("prj-a", "team-devs", { access: "admin" });
    expect(await authorize(principal({ teamIds: ["team-policy"] }), "variables:read", ACME_A)).toBe(false);
    expect(await authorize(principal({ organization: "other", teamIds: ["team-devs"] }), "variables:read", ACME_A)).toBe(false);
  });

  it("denies a project of another organization than the target names, and a target without a project", async () => {
    const { authorize } = await setup();
    expect(await authorize(owner, "variables:read", { organization: "acme", projectId: "prj-x" })).toBe(false);
    expect(await authorize(owner, "variables:read", { organization: "acme", projectId: "prj-nope" })).toBe(false);
    expect(await authorize(owner, "variables:read", { organization: "acme" })).toBe(false);
  });

  it("decides organization actions with the teams' organization permissions", async () => {
    const { authorize } = await setup();
    const viaTeam = principal({ userId: "user-pol", teamIds: ["team-policy"] });
    expect(await authorize(viaTeam, "policy-set-parameters:write", { organization: "acme" })).toBe(true);
    expect(await authorize(viaTeam, "agent-tokens:manage", { organization: "acme" })).toBe(false);
    expect(await authorize(principal(), "policy-set-parameters:read", { organization: "acme" })).toBe(false);
    expect(await authorize(principal({ kind: "organization", teamIds: [] }), "policy-set-parameters:read", { organization: "acme" })).toBe(true);
  });

  it("denies an action it does not know, and logs why at debug level without values", async () => {
    const { authorize, debug } = await setup();
    expect(isAction("everything") || isOrganizationAction("everything")).toBe(false);
    expect(await authorize(owner, "everything", ACME_A)).toBe(false);
    expect(debug.at(-1)).toStrictEqual({ action: "everything", reason: "everything: not an action the authorizer knows" });
  });
});
