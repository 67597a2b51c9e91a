import { describe, expect, it } from "vitest";
import { readServerConfig } from "../../examples/server/config.js";

// Decision D33: the reference server limits each credential at HCP Terraform's documented figure
// unless RATE_LIMIT (--rate-limit) says otherwise or "off".

describe("reference server settings: RATE_LIMIT", () => {
  it("is HCP Terraform's 30 requests per second per credential by default", () => {
    const { config, problems } = readServerConfig({});
    expect(problems).toStrictEqual([]);
    expect(config.rateLimit).toBe(30);
  });

  it.each([
    ["100", 100],
    ["0.5", 0.5],
    ["off", false],
  ] as const)("takes %s", (text, expected) => {
    const { config, problems } = readServerConfig({ RATE_LIMIT: text });
    expect(problems).toStrictEqual([]);
    expect(config.rateLimit).toBe(expected);
  });

  it.each(["0", "-1", "fast", "1e3", "30/s"])("refuses %s, naming the setting and what it takes", (text) => {
    const { config, problems } = readServerConfig({ RATE_LIMIT: text });
    expect(problems).toStrictEqual([
      { variable: "RATE_LIMIT", message: `RATE_LIMIT (--rate-limit) must be a positive number of requests per second (default 30, HCP Terraform's figure) or "off"; got ${JSON.stringify(text)}` },
    ]);
    expect(config.rateLimit).toBe(30);
  });
});
