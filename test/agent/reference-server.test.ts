import { afterEach, describe, expect, it } from "vitest";
import { DEMO } from "../../examples/server/demo.js";
import { startIntegration } from "../../examples/server/integration.js";
import { authorized, scratchDirs, serve } from "../cli/helpers.js";
import { spawnAgent } from "./processes.js";
import { poolTaskBody } from "./support.js";

// Decision D34 in the reference server (`runplane serve`): a second example integration on a
// loopback port the server's egress refuses passes a demo run's post-plan stage through
// `runplane agent`, with an agent token made through the API.

const dirs = scratchDirs();
let closeIntegration: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeIntegration?.();
  closeIntegration = undefined;
});

describe("the reference server with an agent", () => {
  it("passes every stage of a demo run whose extra run task is reached only through the agent", async () => {
    const hmacKey = "private-integration-key";
    const integration = await startIntegration({ hmacKey, port: 0 });
    closeIntegration = integration.close;
    const s = await serve(dirs.fresh());
    const origin = new URL(s.api).origin;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${s.api}${path}`, { method, headers: authorized(s.token), ...(body ? { body: JSON.stringify(body) } : {}) });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : null };
    };

    // The platform's own egress refuses the integration's address.
    const direct = await call("POST", `/organizations/${DEMO.organization}/tasks`, poolTaskBody("direct", integration.url, null, { "hmac-key": hmacKey }));
    expect(direct.status).toBe(422);

    const token = await call("POST", `/agent-pools/${DEMO.agentPool}/authentication-tokens`, { data: { type: "authentication-tokens", attributes: { description: "private net" } } });
    expect(token.status).toBe(201);
    const agent = spawnAgent(["--url", origin, "--name", "private-net", "--allow", "127.0.0.1/32"], { RUNPLANE_AGENT_TOKEN: token.json.data.attributes.token });
    const agentId = await agent.registered;

    const task = await call("POST", `/organizations/${DEMO.organization}/tasks`, poolTaskBody("private-scan", integration.url, DEMO.agentPool, { "hmac-key": hmacKey }));
    expect(task.status).toBe(201);
    const attached = await call("POST", `/workspaces/${DEMO.workspace}/tasks`, {
      data: { type: "workspace-tasks", attributes: { "enforcement-level": "mandatory", stages: ["post_plan"] }, relationships: { task: { data: { type: "tasks", id: task.json.data.id } } } },
    });
    expect(attached.status).toBe(201);

    const run = await fetch(`${origin}/demo/runs`, { method: "POST", headers: { ...authorized(s.token), "content-type": "application/json" }, body: JSON.stringify({ message: "hello" }) });
    const played = (await run.json()) as { run_id: string; stages: Record<string, string> };
    expect(run.status).toBe(200);
    expect(Object.values(played.stages).every((status) => status === "passed")).toBe(true);

    const stages = await call("GET", `/runs/${played.run_id}/task-stages?include=task_results`);
    const results = (stages.json.included as any[]).filter((r) => r.type === "task-results" && r.attributes["task-name"] === "private-scan");
    expect(results).toHaveLength(1);
    expect(results[0].attributes).toMatchObject({ status: "passed", "agent-pool-id": DEMO.agentPool });
    const attempts = await call("GET", `/task-results/${results[0].id}/delivery-attempts`);
    expect(attempts.json.data.map((a: any) => [a.attributes.status, a.attributes["agent-id"]])).toStrictEqual([[200, agentId]]);

    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    expect(await s.stop()).toBe(0);
    // A server and an agent process each: seconds alone, more on a loaded machine.
  }, 60_000);

  // Found by a newcomer: the server logged "shutting down" on SIGTERM but kept answering a connected
  // agent's long-polls over its keep-alive connection and never exited.
  it("exits on SIGTERM within seconds while an agent is still connected", async () => {
    const s = await serve(dirs.fresh());
    const origin = new URL(s.api).origin;
    const token = await fetch(`${s.api}/agent-pools/${DEMO.agentPool}/authentication-tokens`, {
      method: "POST",
      headers: authorized(s.token),
      body: JSON.stringify({ data: { type: "authentication-tokens", attributes: { description: "waiting" } } }),
    });
    const hmacKey = "private-integration-key";
    const integration = await startIntegration({ hmacKey, port: 0 });
    closeIntegration = integration.close;
    const agent = spawnAgent(["--url", origin, "--name", "waiting", "--allow", "127.0.0.1/32"], { RUNPLANE_AGENT_TOKEN: ((await token.json()) as any).data.attributes.token });
    try {
      await agent.registered;
      // A pool task's verification goes through the agent's poll; its report then waits in the
      // server as the agent's next poll (next-wait-ms), so after the 201 a long-poll is open there.
      const task = await fetch(`${s.api}/organizations/${DEMO.organization}/tasks`, { method: "POST", headers: authorized(s.token), body: JSON.stringify(poolTaskBody("waiting-scan", integration.url, DEMO.agentPool, { "hmac-key": hmacKey })) });
      expect(task.status).toBe(201);
      const started = Date.now();
      expect(await s.stop()).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      agent.child.kill("SIGKILL");
    }
  }, 60_000);
});
