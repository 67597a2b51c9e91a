import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import config, { binEntries, entries } from "../tsup.config.js";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  exports: Record<string, { import: string; types: string; default: string }>;
  files: string[];
  bin: Record<string, string>;
  scripts: Record<string, string>;
  sideEffects: boolean;
  type: string;
  repository?: unknown;
  homepage?: unknown;
  bugs?: unknown;
};

describe("package", () => {
  it("is ESM only and free of side effects", () => {
    expect(pkg.type).toBe("module");
    expect(pkg.sideEffects).toBe(false);
  });

  it("has a build entry for every export and an export for every build entry", () => {
    const fromExports = Object.entries(pkg.exports).map(([subpath, target]) => {
      const name = subpath === "." ? "index" : subpath.slice(2);
      expect(target.import).toBe(`./dist/${name}.js`);
      expect(target.types).toBe(`./dist/${name}.d.ts`);
      // \`default\` lets require() load the ESM build on Node >= 20.19.
      expect(target.default).toBe(target.import);
      expect(Object.keys(target)[0]).toBe("types");
      return name;
    });
    expect(fromExports.sort()).toEqual(Object.keys(entries).sort());
  });

  it("ships the LICENSE and README with the build", () => {
    expect(pkg.files).toEqual(expect.arrayContaining(["dist", "LICENSE", "README.md"]));
    expect(readFileSync(new URL("../LICENSE", import.meta.url), "utf8")).toMatch(/^MIT License/);
  });

  it("ships the runplane command as a built, executable entry, and npm start runs its serve without a build", () => {
    expect(pkg.bin).toEqual({ runplane: "./dist/cli.js" });
    expect(Object.keys(binEntries)).toEqual(["cli"]);
    expect(readFileSync(new URL(`../${binEntries.cli}`, import.meta.url), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect(pkg.scripts.start).toBe(`tsx ${binEntries.cli} serve`);
  });

  // The project has no public address yet: an invented one (github.com/runplane/runplane) sends
  // users' bug reports and npm's "Repository" link to a stranger, so none is named until one exists.
  it("names no repository, homepage or bug tracker address", () => {
    expect(pkg.repository).toBeUndefined();
    expect(pkg.homepage).toBeUndefined();
    expect(pkg.bugs).toBeUndefined();
    expect(readFileSync(new URL("../package.json", import.meta.url), "utf8")).not.toMatch(/github\.com\/runplane/);
  });

  // decision D51: source maps name runplane's TypeScript files and lines in stack traces, without
  // carrying the sources (two thirds of the unpacked package before); test/packed-tarball.test.ts
  // checks the packed result.
  it("builds source maps without sourcesContent", () => {
    const options = config as { sourcemap?: boolean; esbuildOptions?: (o: { sourcesContent?: boolean }, c: unknown) => void };
    expect(options.sourcemap).toBe(true);
    const esbuild: { sourcesContent?: boolean } = {};
    options.esbuildOptions?.(esbuild, { format: "esm" });
    expect(esbuild.sourcesContent).toBe(false);
  });
});
