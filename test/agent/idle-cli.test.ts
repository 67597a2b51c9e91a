import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { deliveriesTo, tasksAnswer } from "../delivery/support.js";
import { attachTask } from "../helpers/run-tasks.js";
import { startLoopbackServer, type LoopbackServer } from "../helpers/loopback-server.js";
import { buildCli, spawnBuiltAgent } from "./built-cli.js";
import { agentApp, poolTaskBody, type AgentApp } from "./support.js";

// Found by an operator (issue 43): the packed CLI's `runplane agent` with its default flags dropped
// every idle poll (the client gave 15 s to a poll the server held 25 s), then backed off for up to
// 30 s: runs started in such a gap waited 20 s for their first attempt, and a private task created
// then was refused 422. decision D44: the agent polls with the server's wait. This runs the built CLI
// with its default flags on real timers, idle for 90 s (several server poll waits), as an operator does.

const IDLE_MS = 90_000;
let cli: Awaited<ReturnType<typeof buildCli>>;
let receiver: LoopbackServer | undefined;
let a: AgentApp | undefined;
beforeAll(async () => void (cli = await buildCli()), 120_000);
afterAll(async () => {
  await a?.close();
  await receiver?.close();
  cli?.remove();
});

describe("the built `runplane agent` with its default flags, idle", () => {
  it("keeps its poll open for 90 s: a private task created at a random moment is 201, a run's first attempt comes within 1 s, no reconnect is logged", async () => {
    let firstAt: number | undefined;
    receiver = await startLoopbackServer(tasksAnswer(() => ((firstAt ??= performance.now()), { kind: "respond", status: 200 })));
    a = await agentApp();
    const agent = spawnBuiltAgent(cli.path, ["--url", a.origin], { RUNPLANE_AGENT_TOKEN: a.agentToken });
    try {
      await agent.registered;
      const began = Date.now();
      // A random moment of the idle time (past the first poll's 25 s, where the old client failed).
      await new Promise((resolve) => setTimeout(resolve, 26_000 + Math.random() * 50_000));
      const task = await a.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody("idle-scan", receiver.url("/hook")) });
      expect(task.status, task.text).toBe(201);
      await attachTask(a, task.json.data.id, "mandatory", ["post_plan"]);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, IDLE_MS - (Date.now() - began))));

      const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "after idle" });
      a.dispatcher().start();
      const started = performance.now();
      await a.runplane.runTasks.startStage(run.id, "post_plan");
      await vi.waitFor(() => expect(deliveriesTo(receiver!.requests)).toHaveLength(1), { timeout: 5_000, interval: 10 });
      expect(firstAt! - started).toBeLessThan(1_000);
      expect(stages.some((s) => s.stage === "post_plan")).toBe(true);
      expect(agent.output()).not.toMatch(/lost the connection|connected again|retrying/);
    } finally {
      agent.child.kill("SIGTERM");
      await agent.exited;
    }
  }, 180_000);
});
