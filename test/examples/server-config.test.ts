import { describe, expect, it } from "vitest";
import { readServerConfig } from "../../examples/server/config.js";

// The reference server checks its settings up front, each wrong one named in a line
// with what it accepts, instead of failing later with Node's own error (a bind's RangeError) or a
// hang (a one-connection pool waiting on its own startup lock).

describe("reference server settings: ports", () => {
  it.each(["0", "1", "8080", "65535"])("accepts PORT and INTEGRATION_PORT %s", (text) => {
    const { config, problems } = readServerConfig({ PORT: text, INTEGRATION_PORT: text });
    expect(problems).toStrictEqual([]);
    expect([config.port, config.integrationPort]).toStrictEqual([Number(text), Number(text)]);
  });

  it.each(["65536", "99999", "100000", "1.5", "-1", "1e3", "0x50", "80 80"])("refuses port %s before anything binds, naming the setting and the range", (text) => {
    const { config, problems } = readServerConfig({ PORT: text, INTEGRATION_PORT: text });
    expect(problems).toStrictEqual([
      { variable: "PORT", message: `PORT (--port) must be an integer from 0 to 65535 (0: any free port); got ${JSON.stringify(text)}` },
      { variable: "INTEGRATION_PORT", message: `INTEGRATION_PORT (--integration-port) must be an integer from 0 to 65535 (0: any free port); got ${JSON.stringify(text)}` },
    ]);
    // The defaults stay, so the other settings can still be looked at.
    expect([config.port, config.integrationPort]).toStrictEqual([8080, 8081]);
  });
});

describe("reference server settings: DATABASE_POOL_SIZE", () => {
  it.each(["2", "10", "50"])("accepts %s connections", (text) => {
    const { config, problems } = readServerConfig({ DATABASE_POOL_SIZE: text });
    expect(problems).toStrictEqual([]);
    expect(config.poolSize).toBe(Number(text));
  });

  it("leaves the pool size to node-postgres when unset", () => {
    expect(readServerConfig({}).config.poolSize).toBeUndefined();
  });

  // One connection holds the startup lock while the others seed: with a single one, serve would wait forever.
  it.each(["1", "0", "-3", "1.5", "two"])("refuses %s, saying one connection holds the startup lock", (text) => {
    const { config, problems } = readServerConfig({ DATABASE_POOL_SIZE: text });
    expect(problems).toStrictEqual([
      {
        variable: "DATABASE_POOL_SIZE",
        message: `DATABASE_POOL_SIZE (--database-pool-size) must be an integer of at least 2 (one connection holds the startup lock); got ${JSON.stringify(text)}`,
      },
    ]);
    expect(config.poolSize).toBeUndefined();
  });
});
