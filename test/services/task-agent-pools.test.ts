import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createKeyring, generateKey, silentLogger } from "../../src/index.js";
import { newId } from "../../src/crypto/random.js";
import type { AgentSessions } from "../../src/services/agent-sessions.js";
import type { ServiceContext } from "../../src/services/context.js";
import { createServices } from "../../src/services/index.js";
import { createKeyringControl } from "../../src/services/keyring-control.js";
import type { TaskEndpoint } from "../../src/services/task-endpoint.js";

/**
 * Decision D34 behind the API: a run task of a pool is verified only through an agent of that pool
 * (`AgentSessions`, which the agent protocol implements), never by the platform's own request.
 */

function setup(connected: readonly string[]) {
  const storage = createMemoryStorage();
  const keyring = createKeyring({ keys: [{ id: "k", key: generateKey() }] });
  const direct: TaskEndpoint[] = [];
  const throughAgents: { poolId: string; endpoint: TaskEndpoint; pointer: string }[] = [];
  const agentSessions: AgentSessions = {
    connected: (poolId) => connected.includes(poolId),
    checkEndpoint: async (poolId, endpoint, pointer) => void throughAgents.push({ poolId, endpoint, pointer }),
  };
  const ctx: ServiceContext = {
    storage,
    keyring,
    keys: createKeyringControl(keyring, storage, silentLogger),
    logger: silentLogger,
    dialect: "default",
    now: () => new Date(Date.UTC(2026, 0, 1)),
    newId,
    taskEndpointCheck: async (endpoint) => void direct.push(endpoint),
    agentSessions,
  };
  const services = createServices(ctx);
  return { services, storage, direct, throughAgents };
}

async function withPools(s: ReturnType<typeof setup>) {
  await s.services.directory.organizations.create({ name: "acme" });
  await s.services.directory.agentPools.create({ id: "apool-a", name: "inside", organization: "acme" });
  await s.services.directory.agentPools.create({ id: "apool-b", name: "lab", organization: "acme" });
}

describe("run task verification through an agent pool (D34)", () => {
  it("verifies a pool's task through a connected agent of that pool, never directly", async () => {
    const s = setup(["apool-a"]);
    await withPools(s);
    const task = await s.services.runTasks.tasks.create("acme", { name: "scan", url: "http://10.0.0.5/hook", "hmac-key": "k" }, { agentPoolId: "apool-a" });
    expect(task.agentPoolId).toBe("apool-a");
    expect(s.direct).toStrictEqual([]);
    expect(s.throughAgents).toStrictEqual([{ poolId: "apool-a", endpoint: { organization: "acme", url: "http://10.0.0.5/hook", hmacKey: "k" }, pointer: "/data/attributes/url" }]);
    expect((await s.storage.runTasks.get(task.id))!.agentPoolId).toBe("apool-a");
  });

  it("verifies a move to another pool through that pool, and refuses one whose agents are not connected", async () => {
    const s = setup(["apool-a"]);
    await withPools(s);
    const task = await s.services.runTasks.tasks.create("acme", { name: "scan", url: "http://10.0.0.5/hook" }, { agentPoolId: "apool-a" });
    await expect(s.services.runTasks.tasks.update(task.id, {}, { agentPoolId: "apool-b" })).rejects.toThrow("no agent of pool lab (apool-b) is connected");
    expect((await s.storage.runTasks.get(task.id))!.agentPoolId).toBe("apool-a");
    const moved = await s.services.runTasks.tasks.update(task.id, { url: "http://10.0.0.6/hook" }, {});
    expect(moved.agentPoolId).toBe("apool-a");
    expect(s.throughAgents.map((c) => [c.poolId, c.endpoint.url])).toStrictEqual([["apool-a", "http://10.0.0.5/hook"], ["apool-a", "http://10.0.0.6/hook"]]);
    expect(s.direct).toStrictEqual([]);
  });

  it("changes nothing for a direct task: its endpoint is checked directly and it names no pool", async () => {
    const s = setup(["apool-a"]);
    await withPools(s);
    const task = await s.services.runTasks.tasks.create("acme", { name: "scan", url: "https://scan.example/hook" });
    expect(task.agentPoolId).toBeNull();
    expect(s.direct.map((e) => e.url)).toStrictEqual(["https://scan.example/hook"]);
    expect(s.throughAgents).toStrictEqual([]);
  });
});
