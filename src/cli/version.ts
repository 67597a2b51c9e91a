import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * runplane's version, from its own package.json: the nearest one above this module that is
 * runplane's (dist/cli.js in the package, src/cli/version.ts in the repository).
 */
export function packageVersion(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, "utf8")) as { name?: unknown; version?: unknown };
      if (manifest.name === "runplane" && typeof manifest.version === "string") return manifest.version;
    }
    if (dirname(dir) === dir) return "unknown";
  }
}
