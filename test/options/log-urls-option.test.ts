import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane, generateKey, RunplaneOptionsError, silentLogger } from "../../src/index.js";

/** decision D32: option `logUrls.lifetime` is checked up front, like every option. */
describe("option logUrls", () => {
  const build = (logUrls: unknown) => () =>
    createRunplane({ storage: createMemoryStorage(), logger: silentLogger, keyring: { keys: [{ id: "k1", key: generateKey() }] }, logUrls: logUrls as never, host: false });

  it("takes a lifetime from 1 minute to 24 hours", async () => {
    for (const lifetime of ["1m", "1h", "24h", 90_000]) await build({ lifetime })().close();
  });

  it("refuses a lifetime outside that range or an unknown key, naming the option", () => {
    for (const [value, option] of [[{ lifetime: "30s" }, "logUrls.lifetime"], [{ lifetime: "25h" }, "logUrls.lifetime"], [{ lifetime: "soon" }, "logUrls.lifetime"], [{ ttl: "1h" }, "logUrls.ttl"]] as const) {
      let error: unknown;
      try {
        build(value)();
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(value)).toBeInstanceOf(RunplaneOptionsError);
      expect((error as RunplaneOptionsError).option).toBe(option);
    }
  });
});
