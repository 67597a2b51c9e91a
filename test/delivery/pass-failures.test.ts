import { afterEach, describe, expect, it, vi } from "vitest";
import { createPassLoop, type PassLoopParts } from "../../src/delivery/pass-loop.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";

// Found from outside: during a database outage each host logged "run task dispatcher pass failed"
// at error level on every pass (77 lines a host), with no reason. Now: one warning with the reason
// when the first pass fails, one line when a pass succeeds again; other failures stay errors.

let halt = (): void => undefined;
afterEach(() => halt());

function loop(claim: PassLoopParts["claim"]) {
  const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const parts = {
    deliveries: { logger },
    launcher: { launch: vi.fn() },
    sweeper: { sweep: vi.fn(async () => undefined) },
    claim,
    concurrency: 4,
    batchSize: 4,
    pollIntervalMs: 5,
  } as unknown as PassLoopParts;
  const passes = createPassLoop(parts);
  passes.start();
  halt = () => passes.halt();
  const lines = (level: keyof typeof logger) => logger[level].mock.calls.filter(([message]) => String(message).startsWith("run task dispatcher pass"));
  return { lines };
}

describe("a dispatcher's passes while the storage is away", () => {
  it("log one warning with the reason, however many passes fail, and one line once a pass succeeds", async () => {
    let down = true;
    let failedClaims = 0;
    const { lines } = loop(async () => {
      if (down) throw (failedClaims++, new StorageUnavailableError("connection reset", "ECONNRESET"));
      return [];
    });
    await vi.waitFor(() => expect(failedClaims).toBeGreaterThanOrEqual(5), { timeout: 2_000, interval: 5 });
    expect(lines("warn")).toStrictEqual([["run task dispatcher pass failed", { error: "StorageUnavailableError", reason: "connection reset" }]]);
    expect(lines("error")).toStrictEqual([]);
    down = false;
    await vi.waitFor(() => expect(lines("info")).toHaveLength(1), { timeout: 2_000, interval: 5 });
    expect(lines("info")[0]).toStrictEqual(["run task dispatcher passes again", { failedPasses: failedClaims }]);
  });

  it("log any other failure as an error, each time", async () => {
    let failedClaims = 0;
    const { lines } = loop(async () => {
      throw (failedClaims++, new TypeError("a bug"));
    });
    await vi.waitFor(() => expect(failedClaims).toBeGreaterThanOrEqual(3), { timeout: 2_000, interval: 5 });
    expect(lines("error").length).toBeGreaterThanOrEqual(3);
    expect(lines("error")[0]).toStrictEqual(["run task dispatcher pass failed", { error: "TypeError" }]);
  });
});
