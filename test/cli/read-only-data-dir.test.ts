import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { preflight, runChecks } from "../../examples/server/checks.js";
import { parse } from "../../src/cli/args.js";
import { BASE_ENV, killAll, run } from "./helpers.js";

// A read-only DATA_DIR (a read-only volume, or a directory this user may not write) stops the start
// with one line naming the directory, never SQLite's "unable to open database file" or a stack.

const root = mkdtempSync(join(tmpdir(), "runplane-ro-"));
const dir = join(root, "data");
const asRoot = process.getuid?.() === 0;

/** Fills `dir` as a server left it, then makes `root` read-only: a read-only mount for root (whom modes do not stop), mode 0500 otherwise. */
async function readOnly(): Promise<void> {
  if (asRoot) execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", root]);
  mkdirSync(dir, { mode: 0o700 });
  expect((await run(["migrate", "--data-dir", dir])).code).toBe(0);
  if (asRoot) execFileSync("mount", ["-o", "remount,ro", root]);
  else for (const d of [dir, root]) chmodSync(d, 0o500);
}
const ready = readOnly();

afterAll(() => {
  killAll();
  if (asRoot) execFileSync("umount", [root]);
  else for (const d of [root, dir]) chmodSync(d, 0o700);
  rmSync(root, { recursive: true, force: true });
});

const settings = (dataDir: string) => parse(["--port", "0", "--integration-port", "0", "--data-dir", dataDir], {}, true, { ...BASE_ENV }).env;

describe("a read-only data directory", () => {
  it("fails the data directory check and the start, naming the directory", async () => {
    await ready;
    await expect(preflight(settings(dir))).rejects.toThrow(`data directory ${dir} is read-only`);
    const checks = await runChecks(settings(dir));
    expect(checks.find((c) => c.name === "data directory")?.verdict).toStrictEqual({ fix: expect.stringMatching(/is read-only .*: make it writable, or point DATA_DIR \(--data-dir\) at a writable directory$/) });
    expect(JSON.stringify(checks)).not.toContain("unable to open database file");
  });

  it("refuses a data directory it would have to create under a read-only one", async () => {
    await ready;
    await expect(preflight(settings(join(dir, "below")))).rejects.toThrow(`data directory ${join(dir, "below")} cannot be created: ${dir} is read-only`);
  });

  it("serve says so in one line, without a stack", async () => {
    await ready;
    const served = await run(["serve", "--port", "0", "--integration-port", "0", "--data-dir", dir]);
    expect(served.code).toBe(1);
    expect(served.stderr).toMatch(/^runplane serve: [^\n]*\n$/);
    expect(served.stderr).toContain(`data directory ${dir} is read-only`);
    expect(served.stderr).not.toContain("unable to open database file");
  });
});
