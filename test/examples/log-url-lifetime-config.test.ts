import { describe, expect, it } from "vitest";
import { readServerConfig } from "../../examples/server/config.js";

// Decision D32: how long a plan's or apply's `log-read-url` is honoured; the library's option
// `logUrls.lifetime` (default an hour), set on the reference server by LOG_URL_LIFETIME (--log-url-lifetime).

describe("reference server settings: LOG_URL_LIFETIME", () => {
  it("is an hour by default, the library's default", () => {
    const { config, problems } = readServerConfig({});
    expect(problems).toStrictEqual([]);
    expect(config.logUrlLifetimeMs).toBe(3_600_000);
  });

  it.each([
    ["10m", 600_000],
    ["90s", 90_000],
    ["1m", 60_000],
    ["24h", 86_400_000],
    ["1.5h", 5_400_000],
  ] as const)("takes %s", (text, expected) => {
    const { config, problems } = readServerConfig({ LOG_URL_LIFETIME: text });
    expect(problems).toStrictEqual([]);
    expect(config.logUrlLifetimeMs).toBe(expected);
  });

  it.each(["59s", "25h", "2d", "0m", "3600000", "1 h", "soon", "-10m"])("refuses %s, naming the setting and what it takes", (text) => {
    const { config, problems } = readServerConfig({ LOG_URL_LIFETIME: text });
    expect(problems).toStrictEqual([
      {
        variable: "LOG_URL_LIFETIME",
        message: `LOG_URL_LIFETIME (--log-url-lifetime) must be a duration from 1 minute to 24 hours, such as "10m" or "1h" (default 1h); got ${JSON.stringify(text)}`,
      },
    ]);
    expect(config.logUrlLifetimeMs).toBe(3_600_000);
  });
});
