import { spawn, type ChildProcess } from "node:child_process";
import { expect } from "vitest";

const ROOT = new URL("../../", import.meta.url).pathname;
const children: ChildProcess[] = [];

/** The environment of `npm start` on its embedded SQLite file, even where CI names a database. */
const BASE_ENV: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: "" };
for (const name of ["ADMIN_TOKEN", "RUNPLANE_KEYRING", "PORT", "HOST", "INTEGRATION_PORT", "INTEGRATION_URL", "DATA_DIR", "PUBLIC_URL"]) delete BASE_ENV[name];

/** Runs `runplane <args>` through tsx, as `npm start` does, to its exit. */
export function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { cwd: ROOT, env: { ...BASE_ENV, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

export interface Served {
  child: ChildProcess;
  api: string;
  port: number;
  token: string;
  stop(): Promise<number | null>;
}

/** `runplane serve` on ephemeral ports over `dataDir`; resolves once it printed its owners token. */
export async function serve(dataDir: string, extra: string[] = []): Promise<Served> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "serve", "--port", "0", "--integration-port", "0", "--data-dir", dataDir, ...extra], {
    cwd: ROOT,
    env: BASE_ENV,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
  const deadline = Date.now() + 20_000;
  while (!/owners token/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const api = /listening on (\S+)/.exec(out)![1]!;
  const token = /owners token \(printed once[^:]*: (\S+)/.exec(out)![1]!;
  // The signal handlers are installed just after the banner: one answered request means they are.
  expect((await fetch(`${api}/ping`)).status).toBe(204);
  const stop = () => {
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    return exited;
  };
  return { child, api, port: Number(new URL(api).port), token, stop };
}

export function killAll(): void {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
}

export const authorized = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" });
