import { execFileSync, spawn } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package as users get it: built, packed with npm, and installed into a
 * fresh project the way npm installs a tarball, offline: unpacked into node_modules/runplane, its
 * `bin` linked into node_modules/.bin, and only the packages its packed package.json declares as
 * `dependencies` linked in, plus whatever the test says the user installed (better-sqlite3, pg,
 * hono...). Nothing of the repository's dev dependencies is reachable from the package.
 */
export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export const run = (file: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv) =>
  execFileSync(file, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/**
 * Packs as `npm publish` does from a clean checkout: the tracked files only, no `dist`,
 * the repository's node_modules linked in as a developer's `npm ci` would leave them, then
 * `npm pack`, whose lifecycle scripts must build and swap the README. The test builds nothing itself,
 * so a `prepack` that forgets the build ships no `dist` and fails here. Returns the tarball.
 */
export function packAsPublished(scratch: string): { tarball: string; packedFrom: string } {
  const packing = join(scratch, "packing");
  const tracked = run("git", ["ls-files", "-z"], ROOT).split("\0").filter(Boolean);
  for (const file of tracked) if (existsSync(join(ROOT, file))) cpSync(join(ROOT, file), join(packing, file), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(packing, "node_modules"), "dir");
  const name = run("npm", ["pack", "--silent", "--pack-destination", scratch], packing).trim().split("\n").at(-1)!;
  return { tarball: join(scratch, name), packedFrom: packing };
}

interface Manifest {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  bin: Record<string, string>;
}

/** What npm 7+ installs with the package: its dependencies and its peers not marked optional. */
const installedWith = (m: Manifest): string[] => [
  ...Object.keys(m.dependencies),
  ...Object.keys(m.peerDependencies).filter((name) => !m.peerDependenciesMeta[name]?.optional),
];

/** A fresh ESM project at `dir` with the tarball installed and `extra` packages (from the repository's node_modules) "installed" by the user. */
export function installInto(dir: string, tarball: string, extra: string[] = []): void {
  const installed = join(dir, "node_modules/runplane");
  mkdirSync(installed, { recursive: true });
  run("tar", ["xzf", tarball, "-C", installed, "--strip-components=1"], dir);
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as Manifest;
  for (const dep of [...installedWith(manifest), ...extra]) link(dir, dep);
  mkdirSync(join(dir, "node_modules/.bin"), { recursive: true });
  for (const [name, target] of Object.entries(manifest.bin)) {
    chmodSync(join(installed, target), 0o755);
    symlinkSync(join("../runplane", target), join(dir, "node_modules/.bin", name));
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
}

/** What `npm install <name>` would add, taken from the repository's own node_modules. */
export function link(dir: string, name: string): void {
  const target = join(dir, "node_modules", name);
  if (existsSync(target)) return;
  mkdirSync(join(target, ".."), { recursive: true });
  symlinkSync(join(ROOT, "node_modules", name), target, "dir");
}

/** The environment of a user's shell: no variable of this repository's tests or CI leaks in. */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...extra };
}

export interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npx runplane <args>` in `dir`, to its exit. */
export function runplaneCli(dir: string, args: string[], env = userEnv()): Promise<Exit> {
  const child = spawn(join(dir, "node_modules/.bin/runplane"), args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

export interface Served {
  api: string;
  origin: string;
  token: string;
  integration: string;
  output: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** `npx runplane serve` on ephemeral ports; resolves once the banner is printed. */
export async function serveFrom(dir: string, args: string[], env = userEnv()): Promise<Served> {
  const child = spawn(join(dir, "node_modules/.bin/runplane"), ["serve", "--port", "0", "--integration-port", "0", ...args], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  const deadline = Date.now() + 30_000;
  while (!/owners token/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`runplane serve did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const api = /listening on (\S+)/.exec(out)![1]!;
  return {
    api,
    origin: api.replace(/\/api\/v2$/, ""),
    token: /owners token \(printed once[^:]*: (\S+)/.exec(out)![1]!,
    integration: /example integration: (\S+)/.exec(out)![1]!,
    output: () => out,
    stop() {
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      child.kill("SIGTERM");
      return exited;
    },
  };
}
