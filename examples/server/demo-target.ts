import { connect } from "node:net";
import type { Storage } from "../../src/index.js";
import { DEMO_TASKS, INTEGRATION_HOST, type StartedIntegration } from "./integration.js";

/** Where the demo tasks send their requests, and the egress entries that let this host reach it. */
export interface DemoTarget {
  url: string;
  allow: string[];
  /** The tasks already point at another host's bundled integration: leave them as they are. */
  keep: boolean;
}

const BUNDLED = new RegExp(`^http://${INTEGRATION_HOST.replace(/\./g, "\\.")}:(\\d+)/run-task$`);

/**
 * Hosts sharing one database (D27) share one decision about the demo tasks. Each used to
 * point the tasks at its own bundled integration and allow only that port, so deliveries went
 * through or were refused depending on which host claimed them. On a shared database the first
 * host's bundled integration stays the target (its URL and HMAC key are what the tasks hold), and
 * every host allows that address, and nothing else private, for them; when nothing listens there
 * any more (that host stopped, or restarted on another port) the starting host's own integration
 * takes over. INTEGRATION_URL names one
 * integration for all hosts instead; on SQLite (one host) the tasks follow the host's integration.
 * Read inside the storage's startup lock, so hosts starting together agree.
 */
export async function demoTarget(storage: Storage, own: StartedIntegration, shared: boolean): Promise<DemoTarget> {
  const ownTarget = { url: own.url, allow: [own.allow], keep: false };
  if (!shared) return ownTarget;
  const saved = await storage.runTasks.get(DEMO_TASKS[0].id);
  const port = saved ? BUNDLED.exec(saved.url)?.[1] : undefined;
  if (!saved || port === undefined || saved.url === own.url) return ownTarget;
  // The host that saved them is gone (or restarted on another port): this host's integration takes over.
  if (!(await listening(Number(port)))) return ownTarget;
  return { url: saved.url, allow: [`${INTEGRATION_HOST}:${port}`], keep: true };
}

/** Whether something accepts connections on the loopback `port` now (a refused or silent one is not). */
function listening(port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, INTEGRATION_HOST);
    const done = (up: boolean): void => {
      socket.destroy();
      resolve(up);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
