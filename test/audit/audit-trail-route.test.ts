import * as z from "zod";
import { describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { STORAGES } from "./helpers.js";

const ROUTE = "/api/v2/organization/audit-trail";
const VARS = "/api/v2/workspaces/ws-a/vars";

/** go-tfe's `AuditTrailList`: `data` of `AuditTrail` and a `pagination` block, with its JSON names and Go types. */
const GoTfeAuditTrailList = z.object({
  data: z.array(
    z.object({
      id: z.uuid(),
      version: z.string(),
      type: z.string(),
      timestamp: z.iso.datetime({ offset: true }),
      auth: z.object({
        accessor_id: z.string(),
        description: z.string(),
        type: z.enum(["Client", "Impersonated", "System"]),
        impersonator_id: z.string().nullable(),
        organization_id: z.string(),
      }),
      request: z.object({ id: z.string() }),
      resource: z.object({ id: z.string(), type: z.string(), action: z.string(), meta: z.record(z.string(), z.unknown()).nullable() }),
    }),
  ),
  pagination: z.object({
    current_page: z.int(),
    prev_page: z.int().nullable(),
    next_page: z.int().nullable(),
    total_pages: z.int(),
    total_count: z.int(),
  }),
});

async function withChanges(app: TestApp, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await app.call("POST", VARS, { body: { data: { type: "vars", attributes: { key: `k${i}`, value: `v${i}`, category: "env" } } } });
  }
}

// decision D53: the audit trail route, its shape, its authorization and its validation.
describe.each(STORAGES)("GET /organization/audit-trail (%s)", (_name, makeStorage) => {
  it("answers HCP's shape, which go-tfe's AuditTrailList decodes", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    // The test app's setup: its organization, project, workspaces, policy set, teams and tokens.
    const setup = GoTfeAuditTrailList.parse((await app.call("GET", ROUTE)).json).pagination.total_count;
    await withChanges(app, 3);
    const res = await app.call("GET", `${ROUTE}?page[size]=2`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const list = GoTfeAuditTrailList.parse(res.json);
    const total = setup + 3;
    expect(list.pagination).toStrictEqual({ current_page: 1, prev_page: null, next_page: 2, total_pages: Math.ceil(total / 2), total_count: total });
    expect(list.data.map((e) => e.resource.type)).toStrictEqual(["organization", "project"]);
    const created = GoTfeAuditTrailList.parse((await app.call("GET", ROUTE)).json).data.filter((e) => e.resource.type === "var");
    expect(created).toHaveLength(3);
    expect(created[0]).toMatchObject({ version: "0", type: "Resource", resource: { action: "create" }, auth: { type: "Client", organization_id: "acme" } });
    const pages = Math.ceil(total / 2);
    const last = GoTfeAuditTrailList.parse((await app.call("GET", `${ROUTE}?page[size]=2&page[number]=${pages}`)).json);
    expect(last.data).toHaveLength(total % 2 || 2);
    expect(last.pagination).toMatchObject({ current_page: pages, prev_page: pages - 1, next_page: null });
  });

  it("lists only events after since", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    await withChanges(app, 2);
    const all = (await app.call("GET", ROUTE)).json.data as { timestamp: string }[];
    const res = await app.call("GET", `${ROUTE}?since=${encodeURIComponent(all[2]!.timestamp)}`);
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(all.length - 3);
    expect((await app.call("GET", `${ROUTE}?since=2999-01-01T00:00:00Z`)).json).toMatchObject({ data: [], pagination: { total_count: 0, total_pages: 1 } });
  });

  it.each([
    ["since=yesterday", "since"],
    ["since=2026-01-01", "since"],
    ["since=2026-01-01T00:00:00%2B02:00", "since"],
    // Days a calendar does not have (found from outside: they rolled over to the next month).
    ["since=2026-02-30T00:00:00Z", "since"],
    ["since=2026-02-29T00:00:00Z", "since"],
    ["since=2026-11-31T00:00:00.000Z", "since"],
    ["page[size]=1001", "page[size]"],
    ["page[size]=0", "page[size]"],
    ["page[size]=ten", "page[size]"],
    ["page[number]=0", "page[number]"],
    ["page[number]=-1", "page[number]"],
    ["page[number]=99999999999", "page[number]"],
  ])("answers 400 naming the parameter for %s", async (query, parameter) => {
    const app = await createTestApp({ storage: makeStorage() });
    const res = await app.call("GET", `${ROUTE}?${query}`);
    expect(res.status).toBe(400);
    expect(res.json.errors[0].source).toStrictEqual({ parameter });
    expect(res.text).not.toMatch(/stack|SELECT|at-[A-Za-z0-9]{16}\./);
  });

  it("is read by owners only; others get 404, a missing or bad token 401, and each organization sees only its own", async () => {
    const app = await createTestApp({ storage: makeStorage() });
    const d = app.runplane.directory;
    await withChanges(app, 1);
    const tokens = {
      ownersMember: app.ownerToken,
      ownersTeam: (await d.createApiToken({ organization: "acme", kind: "team", teamId: "team-owners" })).token,
      organization: (await d.createApiToken({ organization: "acme", kind: "organization" })).token,
      adminToken: (await d.createApiToken({ organization: "acme", kind: "team", teamId: "team-owners", description: "ADMIN_TOKEN" })).token,
      devsMember: app.devToken,
      devsTeam: (await d.createApiToken({ organization: "acme", kind: "team", teamId: "team-devs" })).token,
    };
    for (const token of [tokens.ownersMember, tokens.ownersTeam, tokens.organization, tokens.adminToken]) {
      const res = await app.call("GET", ROUTE, { token });
      expect(res.status).toBe(200);
      expect((res.json.data as { auth: { organization_id: string } }[]).every((e) => e.auth.organization_id === "acme")).toBe(true);
    }
    for (const token of [tokens.devsMember, tokens.devsTeam]) expect((await app.call("GET", ROUTE, { token })).status).toBe(404);
    expect((await app.call("GET", ROUTE, { token: null })).status).toBe(401);
    expect((await app.call("GET", ROUTE, { token: "at-AAAAAAAAAAAAAAAA.nope" })).status).toBe(401);
    const other = await app.call("GET", ROUTE, { token: app.otherOrgToken });
    expect(other.status).toBe(200);
    const seen = other.json.data as { auth: { organization_id: string }; resource: { type: string } }[];
    expect(seen.every((e) => e.auth.organization_id === "other")).toBe(true);
    expect(seen.some((e) => e.resource.type === "var")).toBe(false);
    // Reading the trail is not itself a change: it records nothing.
    const before = (await app.call("GET", ROUTE)).json.pagination.total_count;
    expect((await app.call("GET", ROUTE)).json.pagination.total_count).toBe(before);
  });
});
