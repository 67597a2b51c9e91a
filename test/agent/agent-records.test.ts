import { afterEach, describe, expect, it } from "vitest";
import { agentApp, POOL, protocol, registerRaw, type AgentApp } from "./support.js";

// Found by an operator (issues 42 and 43): four restarts left four `unknown` records with no way to
// remove one, and one agent token registered 1,501 agents in 49 s, each listed under the pool.
// decision D46: DELETE /agents/:id as HCP Terraform serves it, silent agents pruned after a
// retention, and a cap of agents per token and per pool.

let a: AgentApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

const LONG_AGO = "2026-01-01T00:00:00.000Z";
/** An agent record as a host left it: `status`, last heard from at `lastPingAt`. */
const stored = async (app: AgentApp, id: string, status: "idle" | "busy" | "exited" | "errored", lastPingAt = LONG_AGO, tokenId = app.agentTokenId) =>
  app.storage.agents.insert({ id, agentPoolId: POOL, tokenId, name: id, status, ipAddress: "unknown", lastPingAt, createdAt: lastPingAt });

describe("DELETE /agents/:id", () => {
  it("removes an agent that is unknown (silent), exited or errored: 204, then 404", async () => {
    a = await agentApp();
    await stored(a, "agent-silentAAAAAAAAAAA", "idle"); // idle, but silent for months: reads unknown
    await stored(a, "agent-exitedAAAAAAAAAAA", "exited");
    await stored(a, "agent-erroredAAAAAAAAAA", "errored");
    for (const id of ["agent-silentAAAAAAAAAAA", "agent-exitedAAAAAAAAAAA", "agent-erroredAAAAAAAAAA"]) {
      expect((await a.call("DELETE", `/api/v2/agents/${id}`)).status).toBe(204);
      expect((await a.call("GET", `/api/v2/agents/${id}`)).status).toBe(404);
    }
    expect((await a.call("GET", `/api/v2/agent-pools/${POOL}/agents`)).json.data).toStrictEqual([]);
  });

  it("refuses a connected agent (idle or busy) with 409 naming why, and changes nothing", async () => {
    a = await agentApp();
    const id = await registerRaw(a, a.agentToken, "running");
    const res = await a.call("DELETE", `/api/v2/agents/${id}`);
    expect(res.status).toBe(409);
    expect(res.json.errors[0].detail).toBe(`agent ${id} is idle: only an agent that is unknown, errored or exited can be deleted (stop it first)`);
    expect((await a.call("GET", `/api/v2/agents/${id}`)).json.data.attributes.status).toBe("idle");
  });

  it("is 404 for an unknown agent and for another organization's, and the deleted agent's token can no longer poll as it", async () => {
    a = await agentApp();
    expect((await a.call("DELETE", "/api/v2/agents/agent-noneAAAAAAAAAAAAA")).status).toBe(404);
    const id = await registerRaw(a, a.agentToken, "gone");
    await a.storage.agents.setStatus(id, ["idle"], "exited");
    expect((await a.call("DELETE", `/api/v2/agents/${id}`, { token: a.otherOrgToken })).status).toBe(404);
    expect((await a.call("DELETE", `/api/v2/agents/${id}`)).status).toBe(204);
    a.runplane.agentHub.end(id, "ended");
    expect((await protocol(a, "jobs/next", { "agent-id": id, "wait-ms": 0 }, a.agentToken)).status).toBe(401);
  });
});

describe("agent records over time", () => {
  it("are pruned by the dispatcher's sweep once silent for longer than agentRecords.retention; live ones stay", async () => {
    a = await agentApp({ agentRecords: { retention: "1h" } });
    await stored(a, "agent-oldAAAAAAAAAAAAAA", "exited");
    await stored(a, "agent-recentAAAAAAAAAAA", "exited", new Date(Date.now() - 60_000).toISOString());
    const live = await registerRaw(a, a.agentToken, "live");
    await a.dispatcher().tick();
    expect(await a.storage.agents.get("agent-oldAAAAAAAAAAAAAA")).toBeNull();
    expect(await a.storage.agents.get("agent-recentAAAAAAAAAAA")).not.toBeNull();
    expect(await a.storage.agents.get(live)).not.toBeNull();
  });

  it("are capped per token: past agentRecords.maxPerToken the oldest silent one is removed, and with none silent registration is 409", async () => {
    a = await agentApp({ agentRecords: { maxPerToken: 3, maxPerPool: 10 } });
    await stored(a, "agent-silentAAAAAAAAAAA", "idle");
    const live = [await registerRaw(a, a.agentToken, "a"), await registerRaw(a, a.agentToken, "b")];
    // The third live one takes the silent one's place.
    live.push(await registerRaw(a, a.agentToken, "c"));
    expect(await a.storage.agents.get("agent-silentAAAAAAAAAAA")).toBeNull();
    const refused = await protocol(a, "register", { name: "d" }, a.agentToken);
    expect(refused.status).toBe(409);
    expect(refused.json.errors[0].detail).toBe("this agent token has 3 agents connected, the most allowed (agentRecords.maxPerToken): stop one, or use another token of the pool");
    expect((await a.call("GET", `/api/v2/agent-pools/${POOL}/agents`)).json.data).toHaveLength(3);
    // One stops cleanly: the next registration takes its place.
    expect((await protocol(a, "deregister", { "agent-id": live[0] }, a.agentToken)).status).toBe(204);
    expect((await protocol(a, "register", { name: "d" }, a.agentToken)).status).toBe(201);
    expect(await a.storage.agents.get(live[0]!)).toBeNull();
  });

  it("are capped per pool across its tokens (agentRecords.maxPerPool), 409 naming the pool", async () => {
    a = await agentApp({ agentRecords: { maxPerToken: 10, maxPerPool: 2 } });
    const second = (await a.runplane.agentTokens.create(POOL, { description: "second", createdBy: { type: "organizations", id: "acme" } })).token;
    await registerRaw(a, a.agentToken, "a");
    await registerRaw(a, second, "b");
    const refused = await protocol(a, "register", { name: "c" }, second);
    expect(refused.status).toBe(409);
    expect(refused.json.errors[0].detail).toBe('agent pool "inside" has 2 agents connected, the most allowed (agentRecords.maxPerPool): stop one, or delete a stopped one');
  });
});
