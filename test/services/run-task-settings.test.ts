import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane, silentLogger } from "../../src/index.js";
import { parseDuration, resolveRunTaskSettings, RUNPLANE_VERSION } from "../../src/services/run-task-settings.js";

describe("run task options", () => {
  it("default to localhost, the public URL for the UI, no overrides, a fixed 10 minutes, runplane/<version> and attempts kept 30 days", () => {
    expect(resolveRunTaskSettings({})).toStrictEqual({
      publicUrl: "http://localhost:8080",
      appUrl: "http://localhost:8080",
      basePath: "/api/v2",
      overridableTasks: false,
      deadline: { kind: "fixed", ms: 600_000 },
      userAgent: `runplane/${RUNPLANE_VERSION}`,
      configurationDownloads: false,
      attemptRetentionMs: 30 * 86_400_000,
      auditRetentionMs: 90 * 86_400_000,
      health: { windowMs: 300_000, failureShare: 0.5, minAttempts: 5, retryingForMs: 300_000, noAgentForMs: 300_000, noKeyHolderForMs: 60_000 },
      // decision D46: agents kept 7 days after their last report, 25 per token, 50 per pool.
      agentRecords: { retentionMs: 7 * 86_400_000, maxPerToken: 25, maxPerPool: 50 },
    });
  });

  it("keeps the version of the User-Agent equal to package.json", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(RUNPLANE_VERSION).toBe(pkg.version);
  });

  it("takes every option and trims trailing slashes", () => {
    const settings = resolveRunTaskSettings({
      publicUrl: "https://api.example/",
      appUrl: "https://app.example",
      basePath: "/tfe/api/v2/",
      overridableTasks: true,
      deadline: { idle: "10m", max: "1h" },
      userAgent: "host/1",
      artifacts: { configurationVersion: () => null },
      attempts: { retention: "7d" },
      audit: { retention: "365d" },
      health: { window: "90s", failureShare: 1, minAttempts: 3, retryingFor: 60_000, noAgentFor: "2m", noKeyHolderFor: "30s" },
      agentRecords: { retention: "1d", maxPerToken: 5, maxPerPool: 100 },
    });
    expect(settings).toStrictEqual({
      publicUrl: "https://api.example",
      appUrl: "https://app.example",
      basePath: "/tfe/api/v2",
      overridableTasks: true,
      deadline: { kind: "idle", idleMs: 600_000, maxMs: 3_600_000 },
      userAgent: "host/1",
      configurationDownloads: true,
      attemptRetentionMs: 7 * 86_400_000,
      auditRetentionMs: 365 * 86_400_000,
      health: { windowMs: 90_000, failureShare: 1, minAttempts: 3, retryingForMs: 60_000, noAgentForMs: 120_000, noKeyHolderForMs: 30_000 },
      agentRecords: { retentionMs: 86_400_000, maxPerToken: 5, maxPerPool: 100 },
    });
  });

  it("parses durations and refuses nonsense", () => {
    expect(parseDuration("90s", "d")).toBe(90_000);
    expect(parseDuration("250ms", "d")).toBe(250);
    expect(parseDuration(1500, "d")).toBe(1500);
    expect(parseDuration("2d", "d")).toBe(172_800_000);
    for (const bad of ["10", "-1m", "0s", "ten minutes"] as const) expect(() => parseDuration(bad as never, "d")).toThrow(TypeError);
  });

  it("refuses a bad URL or a max shorter than idle when the runplane is created", () => {
    const base = { storage: createMemoryStorage(), logger: silentLogger };
    expect(() => createRunplane({ ...base, publicUrl: "ftp://x.example" })).toThrow(/publicUrl/);
    expect(() => createRunplane({ ...base, appUrl: "not a url" })).toThrow(/appUrl/);
    expect(() => createRunplane({ ...base, deadline: { idle: "10m", max: "5m" } })).toThrow(/deadline/);
  });
});
