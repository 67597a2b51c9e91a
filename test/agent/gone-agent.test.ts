import { afterEach, describe, expect, it, vi } from "vitest";
import { agentApp, registerRaw, type AgentApp } from "./support.js";

// Found from outside: an agent killed with SIGKILL read `idle` (connected) for 30-60 s after its
// poll's connection closed, until the silence sweep. A poll whose client went away, with no other
// poll or job of that agent after a short grace, ends its session and marks it `unknown` at once.

let a: AgentApp | undefined;
afterEach(async () => {
  await a?.close();
  a = undefined;
});

/** A `jobs/next` that waits, over a real connection the test cuts as a killed agent would. */
function poll(app: AgentApp, agentId: string): AbortController {
  const controller = new AbortController();
  void fetch(`${app.origin}/api/agent/v1/jobs/next`, {
    method: "POST",
    headers: { authorization: `Bearer ${app.agentToken}`, "content-type": "application/json" },
    body: JSON.stringify({ "agent-id": agentId, "wait-ms": 20_000 }),
    signal: controller.signal,
  }).catch(() => undefined);
  return controller;
}

describe("an agent whose connection closes without a goodbye", () => {
  it("reads unknown within seconds, not after a minute of silence", async () => {
    a = await agentApp();
    const agentId = await registerRaw(a, a.agentToken, "killed");
    const cut = poll(a, agentId);
    await vi.waitFor(() => expect(a!.runplane.agentHub.idle().get("apool-inside")).toBe(1));
    expect((await a.storage.agents.get(agentId))?.status).toBe("idle");
    cut.abort(); // SIGKILL: the socket closes, no deregistration
    await vi.waitFor(async () => expect((await a!.storage.agents.get(agentId))?.status).toBe("unknown"), { timeout: 6_000, interval: 100 });
    expect(a.runplane.agentHub.connected("apool-inside")).toBe(false);
  }, 15_000);

  it("stays idle when it polls again within the grace (a poll cut by a proxy, then renewed)", async () => {
    a = await agentApp();
    const agentId = await registerRaw(a, a.agentToken, "renewed");
    const first = poll(a, agentId);
    await vi.waitFor(() => expect(a!.runplane.agentHub.idle().get("apool-inside")).toBe(1));
    first.abort();
    const second = poll(a, agentId);
    await vi.waitFor(() => expect(a!.runplane.agentHub.idle().get("apool-inside")).toBe(1));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await a.storage.agents.get(agentId))?.status).toBe("idle");
    expect(a.runplane.agentHub.connected("apool-inside")).toBe(true);
    second.abort();
  }, 15_000);
});
