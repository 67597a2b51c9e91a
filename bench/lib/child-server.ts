import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface ChildServer {
  url: string;
  info: Record<string, string>;
  child: ChildProcess;
  stop(): Promise<void>;
}

const SERVER = fileURLToPath(new URL("../servers/server.ts", import.meta.url));

/**
 * Starts a bench server in its own process (the load generator stays in this one) and waits for its
 * `READY {json}` line. `script` picks another entry under bench/servers/ speaking the same protocol.
 */
export async function startServer(mode: string, env: Record<string, string> = {}, script: string = SERVER): Promise<ChildServer> {
  // BENCH_NODE_FLAGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") reaches the server's node: Node
  // refuses --cpu-prof in NODE_OPTIONS.
  const flags = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter((f) => f !== "");
  const child = spawn(process.execPath, [...flags, "--import", "tsx", script, mode], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const info = await new Promise<Record<string, string>>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = /READY (\{.*\})/.exec(out);
      if (line) resolve(JSON.parse(line[1]!) as Record<string, string>);
    });
    child.once("exit", (code) => reject(new Error(`bench server ${mode} exited with ${code}`)));
  });
  return {
    url: info.url!,
    info,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
