import { afterEach, describe, expect, it, vi } from "vitest";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { deliveriesTo, tasksAnswer } from "../delivery/support.js";
import { spawnAgent } from "./processes.js";
import { agentApp, startPoolRun, type AgentApp } from "./support.js";

// Decision D34: `runplane agent` carries a pool's requests from its own process, with the token in
// RUNPLANE_AGENT_TOKEN (never in `ps`, never in its output), and exits cleanly on SIGTERM.

let receiver: LoopbackServer | undefined;
let a: AgentApp | undefined;
afterEach(async () => {
  await a?.close();
  await receiver?.close();
  a = undefined;
  receiver = undefined;
});

describe("runplane agent", () => {
  it("delivers a pool task's request, and on SIGTERM deregisters (status exited) and exits 0", async () => {
    receiver = await startLoopbackServer(tasksAnswer({ kind: "respond", status: 200 }));
    a = await agentApp();
    const agent = spawnAgent(["--url", a.origin, "--name", "cli-agent", "--allow", "127.0.0.1/32"], { RUNPLANE_AGENT_TOKEN: a.agentToken });
    const agentId = await agent.registered;
    const { resultId } = await startPoolRun(a, receiver.url("/hook"));
    a.dispatcher().start();
    await vi.waitFor(async () => expect((await a!.storage.taskResults.get(resultId))?.status).toBe("running"), { timeout: 15_000, interval: 50 });
    expect(deliveriesTo(receiver.requests)).toHaveLength(1);

    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    expect((await a.call("GET", `/api/v2/agents/${agentId}`)).json.data.attributes).toMatchObject({ name: "cli-agent", status: "exited" });
    expect(agent.output()).not.toContain(a.agentToken);
    expect(agent.output()).toMatch(/registered as agent-/);
  });

  it("exits 1 with one line when runplane refuses the token", async () => {
    a = await agentApp();
    const agent = spawnAgent(["--url", a.origin], { RUNPLANE_AGENT_TOKEN: "at-not-a-token" });
    expect(await agent.exited).toBe(1);
    expect(agent.output()).toContain("runplane refused the agent token (401)");
  });

  it("refuses to start without a token (exit 1, one line)", async () => {
    const agent = spawnAgent(["--url", "http://127.0.0.1:1"]);
    expect(await agent.exited).toBe(1);
    expect(agent.output().trim()).toBe("runplane agent: --token or RUNPLANE_AGENT_TOKEN is required: an agent token of the pool");
  });

  it("refuses a wrong --allow entry at start (exit 1, one line naming it)", async () => {
    const agent = spawnAgent(["--url", "http://127.0.0.1:1", "--allow", "10.0.0.0/99"], { RUNPLANE_AGENT_TOKEN: "at-x" });
    expect(await agent.exited).toBe(1);
    expect(agent.output().trim().split("\n")).toHaveLength(1);
    expect(agent.output()).toContain("10.0.0.0/99");
  });
});
