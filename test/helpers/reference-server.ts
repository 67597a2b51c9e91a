import { spawn, type ChildProcess } from "node:child_process";

const ROOT = new URL("../../", import.meta.url).pathname;
const children: ChildProcess[] = [];

/** A reference server child process, after it printed its banner. */
export interface SpawnedServer {
  child: ChildProcess;
  /** The API URL the banner printed (`http://127.0.0.1:<port>/api/v2`). */
  api: string;
  /** The printed owners token, or null when the server used `ADMIN_TOKEN`. */
  token: string | null;
  output: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `node --import tsx <args>` in the repository (the reference server's `examples/server/main.ts`
 * or the CLI's `src/cli/main.ts serve ...`) and resolves once its output matches `until` (by default
 * the owners token line that ends the banner). The caller sets the environment; a child that exits
 * first or takes over 20 s fails with what it printed.
 */
export async function spawnServer(args: string[], env: NodeJS.ProcessEnv, until = /owners token/): Promise<SpawnedServer> {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const deadline = Date.now() + 20_000;
  while (!until.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const stop = (): Promise<number | null> => {
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    return exited;
  };
  return {
    child,
    api: /listening on (\S+)/.exec(out)![1]!,
    token: /owners token \(printed once[^:]*: (\S+)/.exec(out)?.[1] ?? null,
    output: () => out,
    stop,
  };
}

/** SIGKILLs every server this file spawned that is still running (for afterAll). */
export function killSpawnedServers(): void {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
}
