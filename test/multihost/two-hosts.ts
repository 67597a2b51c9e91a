import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterEach } from "vitest";
import type { LoopbackServer } from "../helpers/loopback-server.js";
import { DATABASE_URL, dropSchema } from "../helpers/postgres.js";
import type { AgentApp } from "../agent/support.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** What a two-host agent test holds: host B in this process, host A a child process, on one schema. */
export interface TwoHosts {
  receiver?: LoopbackServer;
  b?: AgentApp;
  hostA?: ChildProcess;
  schema?: string;
}

/**
 * Host A as a child process (fixtures/agent-host.ts) on the test's schema, host B in this process;
 * after each test A is killed, B and the receiver closed and the schema dropped.
 */
export function twoHostsOnPostgres(): { t: TwoHosts; startHostA(key: string): Promise<string> } {
  const t: TwoHosts = {};
  afterEach(async () => {
    t.hostA?.kill("SIGKILL");
    await t.b?.close();
    await t.receiver?.close();
    if (t.schema) {
      const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      await dropSchema(admin, t.schema);
      await admin.end();
    }
    t.receiver = t.b = t.hostA = t.schema = undefined;
  });
  /** Starts host A; resolves its origin once it listens. */
  function startHostA(key: string): Promise<string> {
    const hostA = spawn(process.execPath, ["--import", "tsx", "test/multihost/fixtures/agent-host.ts"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", DATABASE_URL, SCHEMA: t.schema!, KEY: key },
      stdio: ["ignore", "pipe", "pipe"],
    });
    t.hostA = hostA;
    return new Promise((resolve, reject) => {
      let out = "";
      hostA.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        const port = /ready (\d+)/.exec(out)?.[1];
        if (port) resolve(`http://127.0.0.1:${port}`);
      });
      hostA.once("exit", () => reject(new Error(`host A exited: ${out}`)));
    });
  }
  return { t, startHostA };
}
