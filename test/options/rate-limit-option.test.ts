import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createRunplane, RunplaneOptionsError, silentLogger, type RunplaneOptions } from "../../src/index.js";

// Decision D33: a wrong `rateLimit` option fails at construction with an error naming it.

function refusal(rateLimit: unknown): RunplaneOptionsError {
  try {
    createRunplane({ storage: createMemoryStorage(), logger: silentLogger, rateLimit } as RunplaneOptions);
  } catch (error) {
    return error as RunplaneOptionsError;
  }
  throw new Error("accepted");
}

describe("option rateLimit (D33)", () => {
  it.each([
    ["rateLimit.requestsPerSecond", { requestsPerSecond: 0 }, "must be a positive number; got 0"],
    ["rateLimit.burst", { burst: 2.5 }, "must be an integer of at least 1; got 2.5"],
    ["rateLimit.callbacksPerSecond", { callbacksPerSecond: "1" }, "must be a positive number"],
    ["rateLimit.maxKeys", { maxKeys: 0 }, "must be an integer of at least 1; got 0"],
    ["rateLimit", { perSecond: 30 }, "has no option perSecond"],
    ["rateLimit", true, "must be false or { requestsPerSecond?"],
  ])("names %s", (option, given, text) => {
    const error = refusal(given);
    expect(error).toBeInstanceOf(RunplaneOptionsError);
    expect(error.option).toBe(option);
    expect(error.message).toContain(text);
  });

  it("takes false, {} and every figure", async () => {
    for (const rateLimit of [false, {}, { requestsPerSecond: 0.5, burst: 1, callbacksPerSecond: 2, callbackBurst: 4, maxKeys: 10 }] as const) {
      await createRunplane({ storage: createMemoryStorage(), logger: silentLogger, rateLimit }).close();
    }
  });
});
