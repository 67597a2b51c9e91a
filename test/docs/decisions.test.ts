import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Every decision code cited in the repository resolves to one record in docs/decisions/, and the
// folder's README indexes every record.

const root = fileURLToPath(new URL("../..", import.meta.url));
const decisionsDir = join(root, "docs/decisions");

/** Where decisions are cited: the code, its tests and examples, the docs and the benchmarks. */
const CITING = ["src", "adapters", "examples", "test", "docs", "bench", "scripts", "README.md"];
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|md|json|sql|sh|ya?ml)$/;
const SKIP_DIRS = new Set(["node_modules", "dist", ".git", "coverage"]);

/** A decision code: `D` and a number, optionally one lower-case letter (`D17a`), as a whole word. */
const CODE = /\bD(\d+)([a-z]?)\b/g;
/** A record's file name: `D<n>[a-z]-slug.md`, no zero padding. */
const RECORD_FILE = /^D([1-9]\d*)([a-z]?)-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;

function files(path: string): string[] {
  const full = join(root, path);
  let stat;
  try {
    stat = statSync(full);
  } catch {
    return [];
  }
  if (stat.isFile()) return TEXT.test(path) ? [path] : [];
  return readdirSync(full, { withFileTypes: true }).flatMap((entry) =>
    (entry.isDirectory() && SKIP_DIRS.has(entry.name)) || entry.name.startsWith(".") ? [] : files(join(path, entry.name)),
  );
}

/** Every cited code with the first few places citing it. */
function citations(): Map<string, string[]> {
  const cited = new Map<string, string[]>();
  for (const file of CITING.flatMap(files)) {
    const lines = readFileSync(join(root, file), "utf8").split("\n");
    lines.forEach((line, i) => {
      for (const match of line.matchAll(CODE)) {
        const where = cited.get(match[0]) ?? [];
        if (where.length < 3) where.push(`${relative(root, join(root, file))}:${i + 1}`);
        cited.set(match[0], where);
      }
    });
  }
  return cited;
}

const entries = readdirSync(decisionsDir).filter((name) => name !== "README.md" && name.endsWith(".md"));
const records = new Map<string, string[]>();
for (const name of entries) {
  const match = RECORD_FILE.exec(name);
  if (!match) continue;
  const code = `D${match[1]}${match[2]}`;
  records.set(code, [...(records.get(code) ?? []), name]);
}
const index = readFileSync(join(decisionsDir, "README.md"), "utf8");
/** The record files the index links to. */
const indexed = new Set([...index.matchAll(/\]\(\.?\/?(D[^)\s]+\.md)\)/g)].map((m) => m[1]!));

describe("decision records (docs/decisions)", () => {
  it("names every record D<n>[a-z]-slug.md, one file per code", () => {
    expect(entries.filter((name) => !RECORD_FILE.test(name))).toEqual([]);
    expect([...records].filter(([, names]) => names.length > 1)).toEqual([]);
  });

  it("has a record for every decision code cited in code, tests, examples, docs and benchmarks", () => {
    const cited = citations();
    expect(cited.size).toBeGreaterThan(30);
    const missing = [...cited].filter(([code]) => !records.has(code)).map(([code, where]) => `${code} (${where.join(", ")})`);
    expect(missing).toEqual([]);
  });

  it("indexes every record in docs/decisions/README.md, and links only to records that exist", () => {
    const names = [...records.values()].flat();
    expect(names.filter((name) => !indexed.has(name))).toEqual([]);
    expect([...indexed].filter((name) => !names.includes(name))).toEqual([]);
  });

  it.each(entries.filter((name) => RECORD_FILE.test(name)))("%s names its code in its heading and has a status", (name) => {
    const code = /^D\d+[a-z]?/.exec(name)![0];
    const text = readFileSync(join(decisionsDir, name), "utf8");
    const heading = text.split("\n").find((line) => line.startsWith("# "));
    expect(heading, "a level-1 heading").toBeDefined();
    expect(heading).toMatch(new RegExp(`\\b${code}\\b`));
    expect(text).toMatch(/^\**Status\**:?\**\s*\S/im);
  });
});
