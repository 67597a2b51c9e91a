/**
 * The `runplane` bin as `npx tsup` builds it (dist/cli.js), built from the current source into a
 * scratch directory under the repository (so it resolves the installed packages), for the rows
 * that run what an operator runs: the built CLI as a child process with its default flags.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "tsup";
import { binEntries } from "../../tsup.config.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export async function buildCli(): Promise<{ path: string; remove(): void }> {
  const dir = mkdtempSync(join(ROOT, ".built-cli-"));
  await build({ entry: binEntries, format: ["esm"], target: "node20", outDir: dir, dts: false, sourcemap: false, splitting: true, silent: true, config: false, external: ["better-sqlite3", "pg", "vitest"] });
  return { path: join(dir, "cli.js"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
