/**
 * The CLI as `npx tsup` builds it (the `runplane` bin, dist/cli.js), built from the current source
 * into a scratch directory, for the tests that run what an operator runs: `runplane agent` with its
 * default flags, as a child process of plain node (no tsx).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "tsup";
import { binEntries } from "../../tsup.config.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Builds the bin into a scratch directory; resolves its path and a remover. */
export async function buildCli(): Promise<{ path: string; remove(): void }> {
  // Under the worktree, so the bundle resolves its external packages from its node_modules.
  const dir = mkdtempSync(join(ROOT, ".built-cli-"));
  await build({ entry: binEntries, format: ["esm"], target: "node20", outDir: dir, dts: false, sourcemap: false, splitting: true, silent: true, config: false, external: ["better-sqlite3", "pg", "vitest"] });
  return { path: join(dir, "cli.js"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface BuiltAgent {
  child: ChildProcess;
  output(): string;
  registered: Promise<string>;
  exited: Promise<number | string>;
}

/** `node <cli.js> agent ...args`, the token in the environment; every line it writes is kept. */
export function spawnBuiltAgent(cli: string, args: string[], env: Record<string, string>): BuiltAgent {
  const child = spawn(process.execPath, [cli, "agent", ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  let onData = (): void => undefined;
  for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (chunk: Buffer) => ((text += chunk.toString("utf8")), onData()));
  const registered = new Promise<string>((resolve, reject) => {
    onData = () => {
      const id = /registered as (agent-[A-Za-z0-9]+)/.exec(text)?.[1];
      if (id) resolve(id);
    };
    child.once("exit", () => reject(new Error(`agent exited before registering: ${text}`)));
  });
  registered.catch(() => undefined);
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => text, registered, exited };
}
