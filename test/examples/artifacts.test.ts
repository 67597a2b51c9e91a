import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { demoConfiguration, demoPlanJson } from "../../examples/server/artifacts.js";
import { tarGz } from "../../examples/server/tarball.js";
import type { ArtifactRun } from "../../src/index.js";

const run = (message: string): ArtifactRun => ({
  id: "run-1",
  organization: "demo",
  workspaceId: "ws-demo",
  message,
  createdBy: "demo",
  createdAt: "2026-01-01T00:00:00.000Z",
  isSpeculative: false,
  configurationVersionId: "cv-demo",
  configurationVersionDownloadable: true,
  applyId: "apply-1",
  planId: "plan-1",
  vcs: null,
});

describe("the reference server's artifacts (D24)", () => {
  it("writes a .tar.gz that the system tar lists and extracts byte for byte", () => {
    const dir = mkdtempSync(join(tmpdir(), "runplane-tar-"));
    try {
      const content = "x".repeat(700);
      writeFileSync(join(dir, "a.tar.gz"), tarGz([{ name: "main.tf", content: "resource {}\n" }, { name: "big.txt", content }], 1_700_000_000));
      expect(execFileSync("tar", ["-tzf", "a.tar.gz"], { cwd: dir, encoding: "utf8" }).trim().split("\n")).toEqual(["main.tf", "big.txt"]);
      execFileSync("tar", ["-xzf", "a.tar.gz"], { cwd: dir });
      expect(readFileSync(join(dir, "big.txt"), "utf8")).toBe(content);
      expect(readFileSync(join(dir, "main.tf"), "utf8")).toBe("resource {}\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("plans to delete a resource only when the run message says destroy", () => {
    const actions = (message: string) => (demoPlanJson(run(message)).resource_changes as any[]).map((c) => c.change.actions);
    expect(actions("hello")).toEqual([["create"], ["no-op"]]);
    expect(actions("Destroy legacy")).toEqual([["create"], ["delete"]]);
    expect(demoConfiguration(run("x")).subarray(0, 2)).toEqual(new Uint8Array([0x1f, 0x8b]));
  });
});
