import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const readme = readFileSync(join(root, "README.md"), "utf8");
const tsBlocks = (markdown: string) => [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
// The repository's README and the one the package ships (docs/npm-readme.md, issue 17.6).
const packageReadme = readFileSync(join(root, "docs/npm-readme.md"), "utf8");
const blocks = [...tsBlocks(readme), ...tsBlocks(packageReadme)];

// Names the README's later snippets use after an earlier one introduced them.
const PRELUDE = `declare const runplane: import("runplane").Runplane;
declare const keyring: import("runplane").KeyringOptions;
declare const createRunplane: typeof import("runplane").createRunplane;
`;

const PATHS = {
  runplane: ["src/index.ts"],
  "runplane/node": ["src/node.ts"],
  "runplane/express": ["src/express.ts"],
  "runplane/integration": ["src/integration/index.ts"],
  "runplane/testing": ["src/testing/index.ts"],
  "runplane/testing/vitest": ["src/testing/vitest.ts"],
  "runplane/adapters/*": ["adapters/*/index.ts"],
};

describe("README (issue 17.5)", () => {
  it("has TypeScript blocks, among them the Hono and Express mounts", () => {
    expect(blocks.length).toBeGreaterThan(3);
    expect(blocks.some((b) => b.includes('from "runplane/express"'))).toBe(true);
  });

  it.each([
    ["examples/hono/app.ts", "app.all(`${runplane.basePath}/*`, (c) => runplane.handler(c.req.raw));"],
    ["examples/express/app.ts", "app.use(createExpressMiddleware(runplane));"],
  ])("shows the very mount line that %s runs", (file, line) => {
    expect(readme).toContain(line);
    expect(readFileSync(join(root, file), "utf8")).toContain(line);
  });

  it("type-checks every ts block against the package's own entries", { timeout: 60_000 }, () => {
    // Inside the worktree so that express, hono and pg resolve from its node_modules.
    const dir = mkdtempSync(join(root, ".readme-check-"));
    try {
      writeFileSync(join(dir, "prelude.d.ts"), PRELUDE);
      blocks.forEach((code, i) => writeFileSync(join(dir, `block-${i}.mts`), `${code}\nexport {};\n`));
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
