import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { killSpawnedServers, spawnServer } from "../helpers/reference-server.js";

// Decision D33 in the reference server: on by default at HCP Terraform's 30 requests a second per
// credential, announced on /ping the way go-tfe reads it; RATE_LIMIT sets the figure.

const dirs: string[] = [];
afterAll(() => {
  killSpawnedServers();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const start = (env: Record<string, string> = {}) => {
  const dir = mkdtempSync(join(tmpdir(), "runplane-rate-"));
  dirs.push(dir);
  return spawnServer(["examples/server/main.ts"], { ...process.env, DATABASE_URL: "", PORT: "0", INTEGRATION_PORT: "0", DATA_DIR: dir, ...env });
};

describe("reference server rate limit (D33)", () => {
  it("announces HCP Terraform's figure on /ping and in the banner by default", async () => {
    const s = await start();
    expect(s.output()).toMatch(/^rate limit: 30 requests a second per token, beyond it 429 with Retry-After \(RATE_LIMIT or --rate-limit changes it, "off" for none\)$/m);
    const ping = await fetch(`${s.api}/ping`, { headers: { authorization: `Bearer ${s.token}` } });
    expect(ping.status).toBe(204);
    expect(ping.headers.get("tfp-api-version")).toBe("2.6");
    expect(ping.headers.get("x-ratelimit-limit")).toBe("30");
    await s.stop();
  });

  it("answers 429 with Retry-After beyond RATE_LIMIT", async () => {
    // One request every 100 s: the second comes long before the next token.
    const s = await start({ RATE_LIMIT: "0.01" });
    expect(s.output()).toMatch(/^rate limit: 0\.01 requests a second per token, beyond it 429 with Retry-After \(RATE_LIMIT or --rate-limit changes it, "off" for none\)$/m);
    const get = () => fetch(`${s.api}/organizations/acme/tasks`, { headers: { authorization: `Bearer ${s.token}` } });
    const first = await get();
    expect(first.status).not.toBe(429);
    expect(first.headers.get("x-ratelimit-limit")).toBe("0.01");
    const second = await get();
    expect(second.status).toBe(429);
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(1);
    expect(((await second.json()) as { errors: { title: string }[] }).errors[0]!.title).toBe("too many requests");
    await s.stop();
  });

  it("says in the banner when RATE_LIMIT turned it off, and how to turn it on", async () => {
    const s = await start({ RATE_LIMIT: "off" });
    expect(s.output()).toMatch(/^rate limit: off \(RATE_LIMIT=off\); RATE_LIMIT or --rate-limit sets requests a second per token \(HCP Terraform's figure: 30\)$/m);
    await s.stop();
  });
});
