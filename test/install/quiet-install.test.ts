/**
 * A fresh `npm ci` of this repository prints no peer-dependency warnings: a newcomer reads
 * 46 lines of `npm warn ERESOLVE` as a broken install. npm resolves the lockfile against the
 * package.json's ranges in a dry run in under a second from its cache, so the check runs the real
 * resolver on a copy of the two files, not a list of versions kept by hand.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "rp-quiet-install-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("installing the repository", () => {
  it("npm ci resolves every peer range without an ERESOLVE or EBADENGINE warning", async () => {
    for (const file of ["package.json", "package-lock.json"]) copyFileSync(join(root, file), join(dir, file));
    const { stdout, stderr } = await run("npm", ["ci", "--dry-run", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"], {
      cwd: dir,
      timeout: 120_000,
      env: { ...process.env, npm_config_loglevel: "warn" },
    });
    const output = `${stdout}\n${stderr}`;
    expect(output).not.toMatch(/ERESOLVE|EBADENGINE|Could not resolve dependency/);
  }, 150_000);
});
