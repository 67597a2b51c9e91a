import { describe, expect, it } from "vitest";
import { readServerConfig } from "../../examples/server/config.js";

// Decision D62: the reference server reads X-Forwarded-For only for the proxies TRUST_PROXY
// (--trust-proxy) names; by default the client's address is the connection's own.

describe("reference server settings: TRUST_PROXY", () => {
  it("is 0 by default: forwarding headers are ignored", () => {
    const { config, problems } = readServerConfig({});
    expect(problems).toStrictEqual([]);
    expect(config.trustProxy).toBe(0);
  });

  it.each([["0", 0], ["1", 1], ["10", 10]] as const)("takes %s", (text, expected) => {
    const { config, problems } = readServerConfig({ TRUST_PROXY: text });
    expect(problems).toStrictEqual([]);
    expect(config.trustProxy).toBe(expected);
  });

  it.each(["11", "-1", "yes", "1.5", "true"])("refuses %s, naming the setting and what it takes", (text) => {
    const { config, problems } = readServerConfig({ TRUST_PROXY: text });
    expect(problems).toStrictEqual([
      { variable: "TRUST_PROXY", message: `TRUST_PROXY (--trust-proxy) must be how many proxies in front append to X-Forwarded-For, 0 to 10 (default 0: the connection's own address); got ${JSON.stringify(text)}` },
    ]);
    expect(config.trustProxy).toBe(0);
  });
});
