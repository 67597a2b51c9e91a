import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createKeyring, generateKey, silentLogger } from "../../src/index.js";
import { newId } from "../../src/crypto/random.js";
import type { ServiceContext } from "../../src/services/context.js";
import { createServices } from "../../src/services/index.js";
import { createKeyringControl } from "../../src/services/keyring-control.js";

/** Decision D34: agents are registered with an agent token of their own pool, and report their status. */

async function setup() {
  const storage = createMemoryStorage();
  const keyring = createKeyring({ keys: [{ id: "k", key: generateKey() }] });
  let t = Date.UTC(2026, 0, 1);
  const ctx: ServiceContext = {
    storage,
    keyring,
    keys: createKeyringControl(keyring, storage, silentLogger),
    logger: silentLogger,
    dialect: "default",
    now: () => new Date((t += 1000)),
    newId,
  };
  const services = createServices(ctx);
  const d = services.directory;
  await d.organizations.create({ name: "acme" });
  await d.agentPools.create({ id: "apool-a", name: "inside", organization: "acme" });
  await d.agentPools.create({ id: "apool-b", name: "lab", organization: "acme" });
  const creator = { type: "organizations" as const, id: "acme" };
  const tokenA = await services.agentTokens.create("apool-a", { description: "a", createdBy: creator });
  const tokenB = await services.agentTokens.create("apool-b", { description: "b", createdBy: creator });
  return { services, storage, tokenA, tokenB };
}

describe("agents service (D34)", () => {
  it("registers an agent with a token of its pool: a new agent- id, idle, first report now", async () => {
    const { services, storage, tokenA } = await setup();
    const view = await services.agents.register("apool-a", { tokenId: tokenA.id, name: "runner", ipAddress: "10.1.2.3" });
    expect(view).toMatchObject({ agentPoolId: "apool-a", organization: "acme", tokenId: tokenA.id, name: "runner", status: "idle", ipAddress: "10.1.2.3" });
    expect(view.id).toMatch(/^agent-[0-9A-Za-z]{16}$/);
    expect(view.lastPingAt).toBe(view.createdAt);
    expect(await storage.agents.get(view.id)).toMatchObject({ id: view.id, agentPoolId: "apool-a" });
  });

  it("refuses a token of another pool, and an unknown pool, writing nothing", async () => {
    const { services, storage, tokenB } = await setup();
    await expect(services.agents.register("apool-a", { tokenId: tokenB.id, ipAddress: "10.1.2.3" })).rejects.toMatchObject({ status: 422 });
    await expect(services.agents.register("apool-none", { tokenId: tokenB.id, ipAddress: "10.1.2.3" })).rejects.toMatchObject({ status: 404 });
    expect((await storage.agents.listByPool("apool-a", {}, { offset: 0, limit: 20 })).total).toBe(0);
  });

  it("records a report's status and time; lists and shows with the pool's organization", async () => {
    const { services, tokenA } = await setup();
    const view = await services.agents.register("apool-a", { tokenId: tokenA.id, ipAddress: "10.1.2.3" });
    const busy = await services.agents.report(view.id, "busy");
    expect(busy.status).toBe("busy");
    expect(busy.lastPingAt > view.lastPingAt).toBe(true);
    expect(await services.agents.get(view.id)).toStrictEqual(busy);
    expect(await services.agents.list("apool-a", { lastPingSince: busy.lastPingAt })).toStrictEqual({ items: [busy], total: 1 });
    await expect(services.agents.list("apool-a", { page: { offset: 0, limit: 101 } })).rejects.toMatchObject({ status: 422 });
  });

  // Found by a newcomer: agents that stopped without saying so, or whose token was revoked, read
  // `idle` for many minutes; the reference promises `unknown` after a minute of silence, on every
  // host, even when the host that saw them last is gone.
  it("reads an idle or busy agent silent for more than a minute as unknown", async () => {
    const { services, storage, tokenA } = await setup();
    const live = await services.agents.register("apool-a", { tokenId: tokenA.id, name: "live", ipAddress: "10.1.2.4" });
    const silentSince = new Date(Date.parse(live.lastPingAt) - 61_000).toISOString();
    const view = { ...live, id: "agent-silent0000000000", name: "gone", status: "busy" as const, lastPingAt: silentSince, createdAt: silentSince };
    await storage.agents.insert({ id: view.id, agentPoolId: "apool-a", tokenId: tokenA.id, name: "gone", status: "busy", ipAddress: "10.1.2.5", lastPingAt: silentSince, createdAt: silentSince });
    expect((await services.agents.get(view.id)).status).toBe("unknown");
    expect((await services.agents.list("apool-a")).items.map((a) => [a.name, a.status])).toStrictEqual([
      ["gone", "unknown"],
      ["live", "idle"],
    ]);
    await storage.agents.setStatus(view.id, ["busy"], "exited");
    expect((await services.agents.get(view.id)).status).toBe("exited");
  });

  // Found from outside: a deleted pool's tokens stayed stored, so a pool created again with the same
  // id (the host chooses ids) made them verify again.
  it("deletes a pool's agent tokens with the pool, so a pool of the same id starts with none", async () => {
    const { services, tokenA } = await setup();
    expect(await services.agentTokens.verify(tokenA.token)).not.toBeNull();
    await services.directory.agentPools.delete("apool-a");
    await services.directory.agentPools.create({ id: "apool-a", name: "again", organization: "acme" });
    expect(await services.agentTokens.verify(tokenA.token)).toBeNull();
    expect((await services.agentTokens.list("apool-a")).total).toBe(0);
  });
});
