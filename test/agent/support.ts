/**
 * Shared set-up of the agent tests (decision D34): a runplane served over real HTTP on 127.0.0.1
 * whose own egress refuses every private address (so the loopback integration is reachable only
 * through an agent), an agent pool with a token, and agents run in this process by `runAgent`.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { runAgent, type AgentHandle, type AgentOptions } from "../../src/agent/index.js";
import { createDispatcher, createEgress, type Dispatcher, type DispatcherOptions, type RunplaneOptions } from "../../src/index.js";
import { toNodeListener } from "../../src/node.js";
import type { Storage } from "../../src/storage/types.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { attachTask } from "../helpers/run-tasks.js";
import { noRealDns } from "../delivery/support.js";

export const POOL = "apool-inside";

export interface AgentApp extends TestApp {
  /** The runplane origin agents connect to. */
  origin: string;
  /** An agent token of {@link POOL}. */
  agentToken: string;
  agentTokenId: string;
  dispatcher(options?: DispatcherOptions): Dispatcher;
  agent(options?: Partial<AgentOptions>): AgentHandle;
  close(): Promise<void>;
}

const serve = (handler: (r: Request) => Promise<Response>): Promise<Server> =>
  new Promise((resolve) => {
    const server = createServer(toNodeListener(handler));
    server.listen(0, "127.0.0.1", () => resolve(server));
  });

export async function agentApp(options: Partial<RunplaneOptions> & { storage?: Storage } = {}): Promise<AgentApp> {
  // The platform's egress: public addresses only (127.0.0.1 is refused), and no real DNS.
  const transport = createEgress({ resolve: noRealDns, timeoutMs: 2_000 });
  const app = await createTestApp({ publicUrl: "https://runplane.example", clock: () => new Date(), ...options, transport });
  await app.runplane.directory.agentPools.create({ id: POOL, name: "inside", organization: "acme" });
  const created = await app.runplane.agentTokens.create(POOL, { description: "test agent", createdBy: { type: "organizations", id: "acme" } });
  const server = await serve(app.runplane.handler);
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dispatchers: Dispatcher[] = [];
  const agents: AgentHandle[] = [];
  return Object.assign(app, {
    origin,
    agentToken: created.token,
    agentTokenId: created.id,
    dispatcher(more: DispatcherOptions = {}) {
      const d = createDispatcher(app.runplane, { random: () => 0, pollIntervalMs: 200, ...more });
      dispatchers.push(d);
      return d;
    },
    agent(more: Partial<AgentOptions> = {}) {
      const handle = runAgent({ url: origin, token: created.token, name: "test-agent", allow: ["127.0.0.1/32"], resolve: noRealDns, pollWaitMs: 1_000, log: () => undefined, backoff: { minMs: 20, maxMs: 200 }, ...more });
      agents.push(handle);
      return handle;
    },
    async close() {
      await Promise.all(agents.map((a) => a.stop().catch(() => undefined)));
      await Promise.all(dispatchers.map((d) => d.stop({ graceMs: 100 })));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await app.runplane.close();
      await transport.close();
    },
  });
}

/** A run task body naming `pool` (HCP Terraform's `agent-pool` relationship). */
export const poolTaskBody = (name: string, url: string, pool: string | null = POOL, extra: Record<string, unknown> = {}) => ({
  data: {
    type: "tasks",
    attributes: { name, url, "hmac-key": "secret-key", ...extra },
    ...(pool ? { relationships: { "agent-pool": { data: { type: "agent-pools", id: pool } } } } : {}),
  },
});

/** Creates a pool task over HTTP, attaches it to ws-a, creates a run and starts its post-plan stage. */
export async function startPoolRun(a: AgentApp, url: string): Promise<{ taskId: string; runId: string; stageId: string; resultId: string }> {
  const res = await a.call("POST", "/api/v2/organizations/acme/tasks", { body: poolTaskBody(`scan-${Math.random().toString(36).slice(2, 8)}`, url) });
  if (res.status !== 201) throw new Error(`task create failed: ${res.status} ${res.text}`);
  const taskId = res.json.data.id as string;
  await attachTask(a, taskId, "mandatory", ["post_plan"]);
  const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
  const stage = stages.find((s) => s.stage === "post_plan")!;
  await a.runplane.runTasks.startStage(run.id, "post_plan");
  const [result] = await a.runplane.runTasks.listResults(stage.id);
  return { taskId, runId: run.id, stageId: stage.id, resultId: result!.id };
}

/** A raw agent protocol call: its status and JSON body (null when none). */
export async function protocol(a: { origin: string }, path: string, body: unknown, token: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${a.origin}/api/agent/v1/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

/** Registers an agent by hand and resolves its id. */
export async function registerRaw(a: AgentApp, token = a.agentToken, name = "raw"): Promise<string> {
  const res = await protocol(a, "register", { name }, token);
  if (res.status !== 201) throw new Error(`register failed: ${res.status}`);
  return res.json["agent-id"] as string;
}

/** A report of a 200 answer for a job. */
export const answered200 = (agentId: string) => ({
  "agent-id": agentId,
  "duration-ms": 5,
  response: { status: 200, headers: { "content-type": "text/plain" }, body: "ok", "body-truncated": false },
});
