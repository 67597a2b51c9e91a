import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The repository's issues are not public, so "issue 27" in the code tells a reader nothing: the
// code names the behaviour it means, or the decision it follows (`D<n>`, docs/decisions/; D35).

const root = fileURLToPath(new URL("../..", import.meta.url));
const CHECKED = ["src", "adapters", "examples", "docs", "bench", "scripts"];
/** Top-level files read by users. */
const PAGES = ["README.md", "CHANGELOG.md"];
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|md|json|sql|sh|ya?ml|html|css)$/;
const SKIP_DIRS = new Set(["node_modules", "dist", ".git", "coverage"]);
/** `issue 27`, `Issue 33.3`, `issues 18 and 24` (not the verb: "the dispatcher issues 2 requests"). */
const ISSUE_REFERENCE = /\bissue #?\d|\bissues \d+(?:\.\d+)?(?:,| and) /i;

function files(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) || entry.name.startsWith(".") ? [] : files(path);
    return TEXT.test(entry.name) ? [path] : [];
  });
}

describe("issue references", () => {
  it("are absent from src/, adapters/, examples/, docs/, bench/, scripts/, the README and the CHANGELOG: a comment, message or page names the behaviour or the decision", () => {
    const found = [...CHECKED.flatMap(files), ...PAGES].flatMap((file) =>
      readFileSync(join(root, file), "utf8")
        .split("\n")
        .flatMap((line, i) => (ISSUE_REFERENCE.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toStrictEqual([]);
  });
});
