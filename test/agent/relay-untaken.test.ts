import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane, generateKey, silentLogger } from "../../src/index.js";
import { toNodeListener } from "../../src/node.js";
import type { MessageRelay } from "../../src/storage/notifications.js";
import type { Storage } from "../../src/storage/types.js";
import { agentApp, poolTaskBody, POOL, protocol, type AgentApp } from "./support.js";

// Found from outside: a pool task's verification relayed to another host (decision D34) answered
// the same "could not be reached" whether no host had an agent of the pool connected or the agents
// were all busy. The 422 now names the real cause, as it does for agents on the serving host.

/** One in-process message relay that every host sharing the storage hears (PostgreSQL's NOTIFY). */
function sharedRelay(): MessageRelay {
  const listeners = new Set<(message: string) => void>();
  return {
    async publish(message) {
      for (const l of [...listeners]) setImmediate(() => l(message));
    },
    async subscribe(listener) {
      listeners.add(listener);
      return async () => void listeners.delete(listener);
    },
  };
}

let b: AgentApp | undefined;
let hostA: { origin: string; server: Server; close(): Promise<void> } | undefined;
afterEach(async () => {
  await hostA?.close();
  await b?.close();
  hostA = b = undefined;
});

/** Host A over `storage`, served on 127.0.0.1. */
async function startHostA(storage: Storage, key: string) {
  const runplane = createRunplane({ storage, logger: silentLogger, publicUrl: "https://runplane.example", keyring: { keys: [{ id: "k1", key }] } });
  const server = createServer(toNodeListener(runplane.handler));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, close };
}

/** Host B (the test app) and host A on one storage and relay; B never has an agent. */
async function twoHosts() {
  const key = generateKey();
  const storage = Object.assign(createMemoryStorage(), { relay: sharedRelay() });
  b = await agentApp({ storage, keyring: { keys: [{ id: "k1", key }] } });
  hostA = await startHostA(storage, key);
  return { b, originA: hostA.origin };
}

const UNTAKEN = /^no agent of pool inside \(apool-inside\) took the verification request within 5 s: /;

describe("a pool task's verification relayed to another host, when no agent takes it", () => {
  it("says its agents are busy when the host that has one found none free", async () => {
    const { b, originA } = await twoHosts();
    // An agent of the pool polled host A moments ago (connected there) and waits for nothing now.
    const agentId = (await protocol({ origin: originA }, "register", { name: "held" }, b.agentToken)).json["agent-id"] as string;
    expect((await protocol({ origin: originA }, "jobs/next", { "agent-id": agentId, "wait-ms": 10 }, b.agentToken)).status).toBe(204);
    const res = await b.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("scan", "http://127.0.0.1:9/hook") });
    expect(res.status).toBe(422);
    expect(res.json.errors[0].source).toStrictEqual({ pointer: "/data/relationships/agent-pool" });
    expect(res.json.errors[0].detail).toMatch(UNTAKEN);
    expect(res.json.errors[0].detail).toMatch(/: its agents are busy$/);
  });

  it("says none of its agents is connected on any host when its report is fresh but no host holds it", async () => {
    const { b } = await twoHosts();
    // The agent reported seconds ago (its host was killed since): the pool reads connected, no host answers.
    const now = new Date().toISOString();
    await b.storage.agents.insert({ id: "agent-AAAAAAAAAAAAAAAA", agentPoolId: POOL, tokenId: b.agentTokenId, name: "gone", status: "idle", ipAddress: "unknown", lastPingAt: now, createdAt: now });
    const res = await b.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("scan", "http://127.0.0.1:9/hook") });
    expect(res.status).toBe(422);
    expect(res.json.errors[0].source).toStrictEqual({ pointer: "/data/relationships/agent-pool" });
    expect(res.json.errors[0].detail).toMatch(UNTAKEN);
    expect(res.json.errors[0].detail).toMatch(/: none of its agents is connected on any host$/);
  });
});
