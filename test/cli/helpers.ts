import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect } from "vitest";
import { killSpawnedServers, spawnServer, type SpawnedServer } from "../helpers/reference-server.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const children: ChildProcess[] = [];

/** The environment of `npm start` on its embedded SQLite file, even where CI names a database. */
export const BASE_ENV: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: "" };
for (const name of ["ADMIN_TOKEN", "RUNPLANE_KEYRING", "PORT", "HOST", "INTEGRATION_PORT", "INTEGRATION_URL", "DATA_DIR", "PUBLIC_URL", "EGRESS_ALLOW", "DATABASE_POOL_SIZE", "RUNPLANE_DIALECT"]) delete BASE_ENV[name];

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

export interface Served extends SpawnedServer {
  port: number;
  token: string;
}

/** `runplane serve` on ephemeral ports over `dataDir`; resolves once it printed its owners token. */
export async function serve(dataDir: string, extra: string[] = []): Promise<Served> {
  const s = await spawnServer(["src/cli/main.ts", "serve", "--port", "0", "--integration-port", "0", "--data-dir", dataDir, ...extra], BASE_ENV);
  // The banner comes after the signal handlers; an answered request also shows the API is mounted.
  expect((await fetch(`${s.api}/ping`)).status).toBe(204);
  return { ...s, port: Number(new URL(s.api).port), token: s.token! };
}

export function killAll(): void {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  killSpawnedServers();
}

export const authorized = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/vnd.api+json" });

/**
 * Fresh data directory paths under one temporary folder, removed (with every server and command
 * the file started) after the file's tests: `fresh()` names one that does not exist yet, `made()`
 * creates it empty, as an operator makes one before `migrate`.
 */
export function scratchDirs(): { fresh: () => string; made: () => string } {
  const root = mkdtempSync(join(tmpdir(), "runplane-cli-"));
  let n = 0;
  const fresh = (): string => join(root, `d${n++}`);
  afterAll(() => {
    killAll();
    rmSync(root, { recursive: true, force: true });
  });
  return {
    fresh,
    made: () => {
      const dir = fresh();
      mkdirSync(dir);
      return dir;
    },
  };
}

/** The status of a read of the demo workspace's variables with `token`. */
export const statusWith = async (s: Served, token: string): Promise<number> =>
  (await fetch(`${s.api}/workspaces/ws-demo/vars`, { headers: authorized(token) })).status;

/** The banner's owners token line, once the server printed all of it. */
export async function ownersLine(s: Served): Promise<string> {
  await s.printed(/owners token[^\n]*\n/);
  return /^owners token[^\n]*$/m.exec(s.output())![0];
}

/** `runplane token list` of a data directory, one line per token. */
export const tokenList = async (dir: string, ...flags: string[]): Promise<string[]> => {
  const result = await run(["token", "list", "--data-dir", dir, ...flags]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return result.stdout.trimEnd().split("\n");
};

/** The ids of the owners team's ADMIN_TOKEN records. */
export const adminTokenIds = async (dir: string): Promise<string[]> =>
  (await tokenList(dir, "--team", "team-owners")).filter((line) => line.endsWith('"ADMIN_TOKEN"')).map((line) => line.split(" ")[0]!);
