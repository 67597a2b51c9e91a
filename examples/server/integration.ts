import { serve } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { createExampleIntegration } from "../integration/server.js";
import type { Runplane } from "../../src/index.js";
import { portTaken } from "./config.js";
import { answerConnect } from "./connect.js";
import { DEMO } from "./demo.js";

/** The loopback address the bundled integration listens on; the egress allowlist holds only it. */
export const INTEGRATION_HOST = "127.0.0.1";

/**
 * The demo run tasks, both pointing at the bundled integration with the same HMAC key. A workspace
 * has one attachment per task with one enforcement level, so "mandatory at post_plan, advisory at
 * pre_apply" takes two tasks.
 */
export const DEMO_TASKS = [
  { id: "task-demo", name: "demo-check", level: "mandatory", stage: "post_plan" },
  { id: "task-demo-advisory", name: "demo-advice", level: "advisory", stage: "pre_apply" },
] as const;

export interface StartedIntegration {
  /** The run task URL of the integration. */
  url: string;
  /** The egress allowlist entry (address or name, and port) that lets runplane reach it and nothing else private. */
  allow: string;
  close(): Promise<void>;
}

/**
 * Socket limits (D26): a client that trickles its headers or body, or idles on a
 * kept-alive socket, loses it instead of holding it (Node's defaults allow 60 s for headers and
 * 300 s for a request). The callback's 5 MiB body still fits 60 s at under 100 kB/s.
 */
export const SOCKET_LIMITS = { headersTimeout: 10_000, requestTimeout: 60_000, keepAliveTimeout: 5_000, maxHeadersCount: 100 } as const;

export function limitSlowClients(server: Server): void {
  Object.assign(server, SOCKET_LIMITS);
}

/** How long connections still busy when the server closes may finish their requests. */
const CLOSE_GRACE_MS = 3_000;

/**
 * Binds a Web handler on `hostname:port` (0 for an ephemeral port); resolves once it listens.
 * `variable` (PORT, INTEGRATION_PORT) is the setting a taken port is blamed on.
 */
export function listen(
  // `env` is @hono/node-server's: the node request (`incoming`), for the connection's address.
  fetch: (request: Request, env?: unknown) => Response | Promise<Response>,
  port: number,
  hostname: string,
  variable: "PORT" | "INTEGRATION_PORT" = "PORT",
): Promise<{ server: Server; port: number; close: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    // One clear line naming the setting instead of a raw EADDRINUSE stack.
    const failed = (error: NodeJS.ErrnoException): void => reject(error.code === "EADDRINUSE" ? new Error(portTaken(variable, port, hostname)) : error);
    const server = serve({ fetch, port, hostname }, (info: AddressInfo) => {
      server.off("error", failed);
      limitSlowClients(server as Server);
      answerConnect(server as Server);
      resolve({
        server: server as Server,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            (server as Server).closeIdleConnections?.();
            // A keep-alive connection that keeps sending requests (an agent's long-poll, a busy
            // client) is never idle: cut what is still open after a grace, or close never ends.
            setTimeout(() => (server as Server).closeAllConnections?.(), CLOSE_GRACE_MS).unref();
          }),
      });
    });
    server.once("error", failed);
  });
}

/**
 * Starts the bundled example integration (`examples/integration/server.ts`) on the loopback
 * address. It must listen before the demo tasks are saved: saving sends the verification request.
 */
export async function startIntegration(options: { hmacKey: string; port: number }): Promise<StartedIntegration> {
  const { handler } = createExampleIntegration({
    hmacKey: options.hmacKey,
    // Logged by kind only: a callback error may carry the callback URL, never the token or key.
    onError: (error) => process.stderr.write(`example integration: callback failed (${error instanceof Error ? error.message : String(error)})\n`),
  });
  const bound = await listen(handler, options.port, INTEGRATION_HOST, "INTEGRATION_PORT");
  // Its address and the port it really bound, nothing else on the loopback interface.
  return { url: `http://${INTEGRATION_HOST}:${bound.port}/run-task`, allow: `${INTEGRATION_HOST}:${bound.port}`, close: bound.close };
}

/**
 * On the database's first start (`seed`, from `seedDemo`) creates the demo run tasks with their
 * fixed ids and attaches them to the demo workspace. A later start only points the demo tasks still
 * there at the integration's current URL and HMAC key (a change re-sends the verification
 * request): decision D52, a task the user deleted or detached is not brought back.
 */
export async function ensureDemoTasks(runplane: Runplane, integration: { url: string; hmacKey: string; keep?: boolean; seed?: boolean }): Promise<void> {
  const { tasks, workspaceTasks } = runplane.runTasks;
  const attached = new Set((await workspaceTasks.list(DEMO.workspace)).items.map((w) => w.taskId));
  for (const task of DEMO_TASKS) {
    const existing = await tasks.get(task.id).catch(() => null);
    // `keep`: another host's bundled integration is the target of every host (demo-target.ts).
    if (existing && integration.keep) continue;
    if (existing) {
      // Same URL and key: nothing to verify, nothing changes but the version.
      await tasks.update(task.id, { url: integration.url, "hmac-key": integration.hmacKey, enabled: true });
    } else if (integration.seed) {
      await tasks.create(
        DEMO.organization,
        {
          name: task.name,
          url: integration.url,
          "hmac-key": integration.hmacKey,
          description: "The reference server's bundled example integration (fails runs whose message contains \"fail\").",
        },
        { id: task.id },
      );
    }
    if (integration.seed && !attached.has(task.id)) {
      await workspaceTasks.create(DEMO.workspace, task.id, { "enforcement-level": task.level, stages: [task.stage] });
    }
  }
}

/** Attachments the banner names; more are counted. */
const NAMED = 5;

/**
 * What the start banner says is attached to the demo workspace now, read at this start: a demo
 * task the user deleted or detached is not named (found from outside: the banner named them still).
 */
export async function demoTasksNote(runplane: Runplane): Promise<string> {
  const { items } = await runplane.runTasks.workspaceTasks.list(DEMO.workspace).catch(() => ({ items: [] }));
  if (items.length === 0) return `no run task attached to ${DEMO.workspace} (the demo tasks were deleted or detached)`;
  // By task id: attachments made in one millisecond (the demo's two) list in no fixed order.
  const named = [...items].sort((a, b) => (a.taskId < b.taskId ? -1 : 1)).slice(0, NAMED).map((w) => `${w.taskId}, ${w.enforcementLevel} at ${w.stages.join(" and ")}`);
  if (items.length > NAMED) named.push(`${items.length - NAMED} more`);
  const list = named.length === 1 ? named[0] : `${named.slice(0, -1).join(", ")}, and ${named.at(-1)}`;
  return `run task${items.length === 1 ? "" : "s"} ${list}, on ${DEMO.workspace}`;
}

/**
 * An integration the host does not run itself (INTEGRATION_URL): several hosts then point the demo
 * tasks at one integration instead of each re-pointing them at its own. Its address becomes the
 * egress allowlist's only entry, with its port (the scheme's default when the URL names none):
 * `10.0.0.5:9000`, `[fd00::5]:443`, `tasks.internal:443`.
 */
export function externalIntegration(url: string): StartedIntegration {
  const { hostname, protocol, port } = new URL(url);
  if (protocol !== "http:" && protocol !== "https:") throw new Error("INTEGRATION_URL must be an http(s) URL");
  // `new URL()` keeps IPv6 hosts in brackets and lower-cases names: the allowlist's own forms.
  const allow = `${hostname}:${port !== "" ? port : protocol === "https:" ? 443 : 80}`;
  return { url, allow, close: async () => undefined };
}
