import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Builds and packs the package, installs the tarball into a scratch project and uses it the way a
 * library user would (issue 17.6). "Install" is what npm does with a tarball, done offline: unpack it
 * into node_modules/runplane and link only the dependencies its packed package.json declares.
 */
const root = fileURLToPath(new URL("..", import.meta.url));
const fixtures = join(root, "test/fixtures/consumer");
const run = (file: string, args: string[], cwd: string) => execFileSync(file, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const tsc = (cwd: string, project: string) => run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", project], cwd);

let scratch = "";
let packedFrom = "";

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "runplane-consumer-"));
  run(process.execPath, [join(root, "node_modules/tsup/dist/cli-default.js"), "--silent"], root);
  // Packed from a copy of what npm reads, so that prepack's README swap never touches the README
  // other test files read meanwhile.
  const packing = join(scratch, "packing");
  for (const entry of ["package.json", "README.md", "LICENSE", "dist", "docs", "scripts"]) cpSync(join(root, entry), join(packing, entry), { recursive: true });
  const tarball = run("npm", ["pack", "--silent", "--pack-destination", scratch], packing).trim().split("\n").at(-1)!;
  packedFrom = packing;
  const installed = join(scratch, "node_modules/runplane");
  mkdirSync(installed, { recursive: true });
  run("tar", ["xzf", join(scratch, tarball), "-C", installed, "--strip-components=1"], scratch);
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  for (const dep of [...Object.keys(manifest.dependencies), "@types/node"]) {
    mkdirSync(join(scratch, "node_modules", dep, ".."), { recursive: true });
    symlinkSync(join(root, "node_modules", dep), join(scratch, "node_modules", dep), "dir");
  }
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  cpSync(fixtures, scratch, { recursive: true });
  const common = { target: "ES2022", strict: true, skipLibCheck: false, types: ["node"], lib: ["ES2023", "DOM"] };
  writeFileSync(join(scratch, "tsconfig.nodenext.json"), JSON.stringify({ compilerOptions: { ...common, module: "NodeNext", moduleResolution: "NodeNext", outDir: "out" }, files: ["consumer.ts"] }));
  writeFileSync(join(scratch, "tsconfig.bundler.json"), JSON.stringify({ compilerOptions: { ...common, module: "ESNext", moduleResolution: "Bundler", noEmit: true, skipLibCheck: true }, files: ["consumer.ts"] }));
}, 180_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("the packed tarball in a scratch project (issue 17.6)", () => {
  it("contains the build, LICENSE and README and nothing from src or test", () => {
    const installed = join(scratch, "node_modules/runplane");
    expect(readFileSync(join(installed, "LICENSE"), "utf8")).toMatch(/^MIT License/);
    expect(readFileSync(join(installed, "README.md"), "utf8")).toContain("createRunplane");
    expect(() => readFileSync(join(installed, "src/index.ts"))).toThrow();
  });

  it("ships the library user's README, and packing puts the repository's README back", () => {
    const shipped = readFileSync(join(scratch, "node_modules/runplane/README.md"), "utf8");
    expect(shipped).toBe(readFileSync(join(root, "docs/npm-readme.md"), "utf8"));
    expect(shipped).toContain("npm install runplane");
    expect(shipped).not.toContain("npm start");
    expect(readFileSync(join(packedFrom, "README.md"), "utf8")).toBe(readFileSync(join(root, "README.md"), "utf8"));
    expect(existsSync(join(packedFrom, ".readme-repo.md"))).toBe(false);
  });

  it("declares createRunplane's result by name rather than as an expanded shape", () => {
    const dts = readFileSync(join(scratch, "node_modules/runplane/dist/index.d.ts"), "utf8");
    expect(dts).toMatch(/declare function createRunplane\(options: RunplaneOptions\): Runplane;/);
    expect(dts).toMatch(/interface Runplane \{[^}]*variables: VariableService;/);
  });

  it("type-checks and runs a consumer under NodeNext resolution", () => {
    tsc(scratch, "tsconfig.nodenext.json");
    const out = JSON.parse(run(process.execPath, ["out/consumer.js"], scratch));
    expect(out).toEqual({ ping: 204, organization: "acme", mounts: ["function", "function"] });
  }, 60_000);

  // The declarations themselves were checked above (skipLibCheck false); here only resolution differs.
  it("type-checks the same consumer under Bundler resolution", () => {
    expect(() => tsc(scratch, "tsconfig.bundler.json")).not.toThrow();
  }, 60_000);

  it("loads with require() from a CommonJS file", () => {
    const out = JSON.parse(run(process.execPath, ["consumer.cjs"], scratch));
    expect(out).toEqual({ ping: 204, middleware: "function" });
  });
});
