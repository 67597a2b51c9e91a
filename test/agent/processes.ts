/**
 * `runplane agent` as a child process (decision D34), for the tests that stop it from outside:
 * SIGTERM (a clean exit) and SIGKILL (a crash mid-attempt). The token goes in the environment.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface AgentProcess {
  child: ChildProcess;
  /** Everything the agent wrote, stdout and stderr. */
  output(): string;
  /** Resolves the agent id once it registered. */
  registered: Promise<string>;
  /** Resolves the exit code (or the signal's name). */
  exited: Promise<number | string>;
}

const spawned = new Set<ChildProcess>();
afterEach(() => {
  for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  spawned.clear();
});

export function spawnAgent(args: string[], env: Record<string, string> = {}): AgentProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "agent", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  spawned.add(child);
  let text = "";
  let onLine = (): void => undefined;
  for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (chunk: Buffer) => ((text += chunk.toString("utf8")), onLine()));
  const registered = new Promise<string>((resolve, reject) => {
    onLine = () => {
      const id = /registered as (agent-[A-Za-z0-9]+)/.exec(text)?.[1];
      if (id) resolve(id);
    };
    child.once("exit", () => reject(new Error(`agent exited before registering: ${text}`)));
  });
  registered.catch(() => undefined);
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => text, registered, exited };
}
