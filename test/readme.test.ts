import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const readme = readFileSync(join(root, "README.md"), "utf8");
const tsBlocks = (markdown: string) => [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

/** Every Markdown file under docs/, as paths relative to the root (docs/npm-readme.md among them). */
function markdownUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? markdownUnder(join(dir, entry.name)) : entry.name.endsWith(".md") ? [join(dir, entry.name)] : [],
  );
}
const docs = markdownUnder("docs").sort();
const guide = (path: string) => readFileSync(join(root, path), "utf8");

// The repository's README, every page of docs/ and the README the package ships (docs/npm-readme.md).
const blocks = [
  ...tsBlocks(readme).map((code) => ({ file: "README.md", code })),
  ...docs.flatMap((file) => tsBlocks(guide(file)).map((code) => ({ file, code }))),
];

// Names later snippets use after an earlier one introduced them (a block that declares or imports
// one of them shadows it). A block that needs more names than these gets them from BLOCK_PRELUDES.
const PRELUDE = `declare const runplane: import("runplane").Runplane;
declare const keyring: import("runplane").KeyringOptions;
declare const createRunplane: typeof import("runplane").createRunplane;
`;
/** Declarations one block needs, by a line of that block; none today. */
const BLOCK_PRELUDES: { line: string; declare: string }[] = [];

const PATHS = {
  runplane: ["src/index.ts"],
  "runplane/node": ["src/node.ts"],
  "runplane/express": ["src/express.ts"],
  "runplane/integration": ["src/integration/index.ts"],
  "runplane/testing": ["src/testing/index.ts"],
  "runplane/testing/vitest": ["src/testing/vitest.ts"],
  "runplane/adapters/*": ["adapters/*/index.ts"],
};

describe("README and docs code blocks", () => {
  it("has TypeScript blocks, among them the Hono and Express mounts, in the README, the guides and the package README", () => {
    expect(blocks.length).toBeGreaterThan(10);
    expect(blocks.some((b) => b.code.includes('from "runplane/express"'))).toBe(true);
    for (const file of ["README.md", "docs/npm-readme.md", "docs/guides/embedding.md", "docs/guides/integrations.md"]) {
      expect(blocks.some((b) => b.file === file), file).toBe(true);
    }
  });

  it.each([
    ["examples/hono/app.ts", "app.all(`${runplane.basePath}/*`, (c) => runplane.handler(c.req.raw));"],
    ["examples/express/app.ts", "app.use(createExpressMiddleware(runplane));"],
  ])("shows the very mount line that %s runs (docs/guides/embedding.md)", (file, line) => {
    expect(guide("docs/guides/embedding.md")).toContain(line);
    expect(readFileSync(join(root, file), "utf8")).toContain(line);
  });

  it("type-checks every ts block against the package's own entries", { timeout: 60_000 }, () => {
    // Inside the worktree so that express, hono and pg resolve from its node_modules.
    const dir = mkdtempSync(join(root, ".readme-check-"));
    try {
      writeFileSync(join(dir, "prelude.d.ts"), PRELUDE);
      // Each block in a file named after where it lives, so an error says which page to fix.
      blocks.forEach(({ file, code }, i) => {
        const name = `${file.replace(/[^a-z0-9]+/gi, "-")}-${i}.mts`;
        const extra = BLOCK_PRELUDES.filter((p) => code.includes(p.line)).map((p) => p.declare).join("\n");
        writeFileSync(join(dir, name), `${extra}${extra ? "\n" : ""}${code}\nexport {};\n`);
      });
      const paths = Object.fromEntries(Object.entries(PATHS).map(([k, v]) => [k, v.map((p) => join(root, p))]));
      const compilerOptions = { ...JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")).compilerOptions, paths, allowImportingTsExtensions: true };
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["*.mts", "*.d.ts"] }));
      let output = "";
      try {
        execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", dir], { encoding: "utf8" });
      } catch (error) {
        output = String((error as { stdout?: string }).stdout);
      }
      expect(output).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
