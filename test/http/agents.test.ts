import { describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.js";
import type { AgentRecord } from "../../src/schemas/agents.js";

/**
 * Decision D34: the Agents API as HCP Terraform has it. `GET /agent-pools/:id/agents` (paged,
 * `filter[last-ping-since]`) and `GET /agents/:id`, type `agents` with `name`, `status`,
 * `ip-address` and `last-ping-at`; read by owners and the manage-agent-pools permission, and
 * another organization's pool or agent is 404 like a missing one (D4, D5a).
 */

const agent = (n: number, overrides: Partial<AgentRecord> = {}): AgentRecord => ({
  id: `agent-${String(n).padStart(16, "0")}`,
  agentPoolId: "apool-a",
  tokenId: "at-secretish",
  name: `runner-${n}`,
  status: "idle",
  ipAddress: "203.0.113.7",
  lastPingAt: `2026-01-01T00:0${n}:00.000Z`,
  createdAt: `2026-01-01T00:00:0${n}.000Z`,
  ...overrides,
});

async function setup(): Promise<TestApp> {
  const app = await createTestApp();
  const d = app.runplane.directory;
  await d.agentPools.create({ id: "apool-a", name: "inside", organization: "acme" });
  await d.agentPools.create({ id: "apool-x", name: "theirs", organization: "other" });
  for (const n of [1, 2, 3]) await app.storage.agents.insert(agent(n));
  await app.storage.agents.insert(agent(4, { agentPoolId: "apool-x" }));
  return app;
}

describe("Agents API (D34)", () => {
  it("lists a pool's agents oldest first, paged, each with exactly HCP Terraform's attributes", async () => {
    const app = await setup();
    const res = await app.call("GET", "/api/v2/agent-pools/apool-a/agents?page[size]=2");
    expect(res.status).toBe(200);
    expect(res.json.data).toStrictEqual([1, 2].map((n) => ({
      id: agent(n).id,
      type: "agents",
      attributes: { name: `runner-${n}`, status: "idle", "ip-address": "203.0.113.7", "last-ping-at": agent(n).lastPingAt },
      links: { self: `/api/v2/agents/${agent(n).id}` },
    })));
    expect(res.json.meta.pagination).toMatchObject({ "current-page": 1, "next-page": 2, "total-count": 3, "total-pages": 2 });
  });

  it("filters by filter[last-ping-since], with Z or an offset as go-tfe may send it", async () => {
    const app = await setup();
    for (const since of ["2026-01-01T00:02:00Z", "2026-01-01T01:02:00%2B01:00", "2026-01-01T00:02:00.000Z"]) {
      const res = await app.call("GET", `/api/v2/agent-pools/apool-a/agents?filter[last-ping-since]=${since}`);
      expect(res.json.data.map((a: { id: string }) => a.id)).toStrictEqual([agent(2).id, agent(3).id]);
      expect(res.json.meta.pagination["total-count"]).toBe(2);
    }
  });

  it("answers a filter that is no date with 400 naming the parameter", async () => {
    const app = await setup();
    const res = await app.call("GET", "/api/v2/agent-pools/apool-a/agents?filter[last-ping-since]=yesterday");
    expect(res.status).toBe(400);
    expect(res.json.errors[0].source).toStrictEqual({ parameter: "filter[last-ping-since]" });
  });

  it("shows one agent, a nameless one with name null, and its latest report and status", async () => {
    const app = await setup();
    await app.storage.agents.insert(agent(5, { name: null }));
    await app.storage.agents.ping(agent(5).id, "2026-01-01T00:09:00.000Z", "busy");
    const res = await app.call("GET", `/api/v2/agents/${agent(5).id}`);
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toStrictEqual({ name: null, status: "busy", "ip-address": "203.0.113.7", "last-ping-at": "2026-01-01T00:09:00.000Z" });
    expect(res.text).not.toContain("at-secretish");
  });

  it("answers 404 for an unknown pool or agent, another organization's, and a member without the permission", async () => {
    const app = await setup();
    for (const path of ["/api/v2/agent-pools/apool-none/agents", "/api/v2/agent-pools/apool-x/agents", "/api/v2/agents/agent-none", `/api/v2/agents/${agent(4).id}`]) {
      expect((await app.call("GET", path)).status, path).toBe(404);
    }
    expect((await app.call("GET", "/api/v2/agent-pools/apool-a/agents", { token: app.devToken })).status).toBe(404);
    expect((await app.call("GET", `/api/v2/agents/${agent(1).id}`, { token: app.devToken })).status).toBe(404);
    expect((await app.call("GET", `/api/v2/agents/${agent(4).id}`, { token: app.otherOrgToken })).status).toBe(200);
  });

  it("lets a team with manage-agent-pools read them", async () => {
    const app = await setup();
    const d = app.runplane.directory;
    await d.teams.create({ id: "team-pools", name: "pools", organization: "acme", orgPermissions: ["manage-agent-pools"], members: [] });
    const token = (await d.createApiToken({ organization: "acme", kind: "team", teamId: "team-pools" })).token;
    expect((await app.call("GET", "/api/v2/agent-pools/apool-a/agents", { token })).status).toBe(200);
    expect((await app.call("GET", `/api/v2/agents/${agent(1).id}`, { token })).status).toBe(200);
  });

  it("treats an agent whose pool is gone as missing", async () => {
    const app = await setup();
    await app.runplane.directory.agentPools.delete("apool-a");
    expect((await app.call("GET", `/api/v2/agents/${agent(1).id}`)).status).toBe(404);
  });
});
