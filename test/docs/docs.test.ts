import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { METRIC } from "../../src/telemetry/metrics.js";

// The README is a front door: short, and every page of docs/ is reachable from its map; every
// relative link in the README and docs/ lands on a file and, with a #fragment, on a heading there.
// (The code blocks of all of them are type-checked by test/readme.test.ts.)

const root = fileURLToPath(new URL("../..", import.meta.url));
const read = (path: string) => readFileSync(join(root, path), "utf8");

function markdownUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? markdownUnder(join(dir, entry.name)) : entry.name.endsWith(".md") ? [join(dir, entry.name)] : [],
  );
}
/** docs/npm-readme.md is the package's README, read on npmjs.com: its links are absolute (below). */
const PACKAGE_README = "docs/npm-readme.md";
const docs = markdownUnder("docs").filter((path) => path !== PACKAGE_README);
const pages = ["README.md", ...docs];

/** Markdown without its fenced code blocks and inline code, where link syntax means nothing. */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```$/gm, "").replace(/`[^`\n]*`/g, "``");

/** The targets of `[text](target)` links and `<https://...>` autolinks. */
function links(markdown: string): string[] {
  const text = prose(markdown);
  return [...[...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!), ...[...text.matchAll(/<(https?:\/\/[^>\s]+)>/g)].map((m) => m[1]!)];
}

/** GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of markdown.replace(/^```[\s\S]*?^```$/gm, "").matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = m[1]!
      .toLowerCase()
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** The repository file (and fragment) a relative link of `from` names. */
function resolve(from: string, target: string): { file: string; fragment: string } {
  const [path, fragment = ""] = target.split("#") as [string, string?];
  const file = path === "" ? from : normalize(join(dirname(from), decodeURIComponent(path)));
  return { file, fragment };
}

describe("README as a front door", () => {
  it("is under 300 lines and starts with the two set-up commands", () => {
    const readme = read("README.md");
    expect(readme.split("\n").length).toBeLessThan(300);
    const firstBlock = /^```sh\n([\s\S]*?)^```$/m.exec(readme)?.[1] ?? "";
    expect(firstBlock).toMatch(/^npm install && npm start +#/m);
    expect(firstBlock).toMatch(/^npm test +#/m);
  });

  // The project has no public address yet: an invented one would send users' questions and bug
  // reports to a stranger, so no page names one (package.json names none either).
  it("names no invented address for the project, and says where to ask without one", () => {
    for (const page of ["README.md", PACKAGE_README, ...docs]) expect(read(page), page).not.toMatch(/github\.com\/runplane\b/);
    expect(read("README.md")).toMatch(/## Where to ask\n\n[^\n]*no public address/);
  });

  it("reaches every page of docs/ from its map, directly or through docs pages", () => {
    const reached = new Set<string>(["README.md"]);
    const queue = ["README.md"];
    while (queue.length > 0) {
      const from = queue.shift()!;
      for (const target of links(read(from))) {
        if (isExternal(target)) continue;
        const { file } = resolve(from, target);
        if (file.endsWith(".md") && file.startsWith("docs/") && existsSync(join(root, file)) && !reached.has(file)) {
          reached.add(file);
          queue.push(file);
        }
      }
    }
    expect(docs.filter((page) => !reached.has(page))).toEqual([]);
  });
});

describe("links in the README and docs/", () => {
  it.each(pages)("%s: every relative link names an existing file, and a heading when it has a #fragment", (page) => {
    const broken: string[] = [];
    for (const target of links(read(page))) {
      if (isExternal(target)) continue;
      const { file, fragment } = resolve(page, target);
      const full = join(root, file);
      if (!existsSync(full) || relative(root, full).startsWith("..")) {
        broken.push(`${target}: no file ${file}`);
        continue;
      }
      if (fragment && statSync(full).isFile() && file.endsWith(".md") && !anchors(read(file)).has(fragment)) {
        broken.push(`${target}: no heading #${fragment} in ${file}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the package README has no relative links, and the repository files it names exist", () => {
    const text = read(PACKAGE_README);
    expect(links(text).filter((t) => !isExternal(t))).toEqual([]);
    const named = [...text.matchAll(/`((?:docs|examples)\/[\w./-]+\.(?:md|ts))`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((path) => !existsSync(join(root, path)))).toEqual([]);
  });
});

describe("docs/reference/metrics.md", () => {
  it("lists exactly the metrics runplane creates", () => {
    const listed = [...read("docs/reference/metrics.md").matchAll(/^\| `(runplane\.[a-z_.]+)` \|/gm)].map((m) => m[1]!);
    expect(listed.sort()).toEqual(Object.values(METRIC).sort());
  });
});
