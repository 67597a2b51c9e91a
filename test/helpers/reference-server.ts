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
  /**
   * Resolves once the output matches `pattern` at least `times` times (as it arrives, no polling
   * and no deadline of its own: the test's timeout bounds it); rejects if the process exits first.
   */
  printed(pattern: RegExp, times?: number): Promise<void>;
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
  const waiters = new Set<() => void>();
  const append = (c: Buffer): void => {
    out += c.toString();
    for (const check of [...waiters]) check();
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  // "close", not "exit": by then everything it printed has arrived.
  let closed = false;
  child.once("close", () => {
    closed = true;
    for (const check of [...waiters]) check();
  });
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
  const printed = (pattern: RegExp, times = 1): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const all = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
      const check = (): void => {
        if ((out.match(all)?.length ?? 0) >= times) waiters.delete(check), resolve();
        else if (closed) waiters.delete(check), reject(new Error(`exited before printing ${pattern} ${times} time(s):\n${out}`));
      };
      waiters.add(check);
      check();
    });
  return {
    child,
    api: /listening on (\S+)/.exec(out)![1]!,
    token: /owners token \(printed once[^:]*: (\S+)/.exec(out)?.[1] ?? null,
    output: () => out,
    printed,
    stop,
  };
}

/** SIGKILLs every server this file spawned that is still running (for afterAll). */
export function killSpawnedServers(): void {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
}
