import { describe, expect, it } from "vitest";
import { createAttemptWindow } from "../../src/services/attempt-window.js";
import { shortDuration } from "../../src/domain/short-duration.js";
import { failingReason, retryingReason } from "../../src/services/delivery-health.js";
import { DEFAULT_DELIVERY_HEALTH } from "../../src/services/run-task-settings.js";

// The attempts `health()` judges are counted in a fixed ring of 30 slices of the window.

const T = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;

describe("attempt window", () => {
  it("holds the attempts of the last window, failures by class, and forgets a slice once it has left", () => {
    const w = createAttemptWindow(5 * MINUTE);
    w.record(T, "4xx", false);
    w.record(T + MINUTE, "2xx", true);
    w.record(T + 2 * MINUTE, "timeout", false);
    expect(w.read(T + 2 * MINUTE)).toStrictEqual({ attempts: 3, failed: 2, failedByClass: { "4xx": 1, timeout: 1 } });
    expect(w.read(T + 5 * MINUTE + 10_000)).toStrictEqual({ attempts: 2, failed: 1, failedByClass: { timeout: 1 } });
    expect(w.read(T + 8 * MINUTE)).toStrictEqual({ attempts: 0, failed: 0, failedByClass: {} });
  });

  it("reuses its 30 buckets however long it runs and however many attempts come", () => {
    const w = createAttemptWindow(5 * MINUTE);
    for (let i = 0; i < 10_000; i++) w.record(T + i * 1_000, i % 2 ? "5xx" : "2xx", i % 2 === 0);
    // The last 5 minutes of a 10,000 s run: 300 attempts, every other one failed.
    expect(w.read(T + 9_999_000)).toStrictEqual({ attempts: 300, failed: 150, failedByClass: { "5xx": 150 } });
  });

  it("drops an attempt stamped before a slice that already reused its bucket (a clock stepping back)", () => {
    const w = createAttemptWindow(30_000);
    w.record(T + 30_000, "4xx", false);
    w.record(T, "4xx", false);
    expect(w.read(T + 30_000).attempts).toBe(1);
  });
});

describe("delivery health reasons", () => {
  it("write durations in whole seconds, largest units first", () => {
    expect([0, 999, 1_000, 90_000, 300_000, 301_000, 3_723_000].map(shortDuration)).toStrictEqual(["0s", "0s", "1s", "1m30s", "5m", "5m1s", "1h2m3s"]);
  });

  it("judge the share only from the minimum number of attempts, and from half of them failing by default", () => {
    const tally = (attempts: number, failed: number) => ({ attempts, failed, failedByClass: { network: failed } });
    expect(failingReason(tally(4, 4), DEFAULT_DELIVERY_HEALTH)).toBeNull();
    expect(failingReason(tally(10, 4), DEFAULT_DELIVERY_HEALTH)).toBeNull();
    expect(failingReason(tally(10, 5), DEFAULT_DELIVERY_HEALTH)).toBe("deliveries failing: 5 of 10 attempts in the last 5m failed (network: 5)");
  });

  it("call retrying too long only past the threshold, and say nothing without the storage's counts", () => {
    const figures = (retrying: number | null, age: number | null) => ({ due: 0, leased: 0, oldestDueAgeSeconds: 0, retrying, oldestRetryingAgeSeconds: age });
    expect(retryingReason(figures(2, 300), DEFAULT_DELIVERY_HEALTH)).toBeNull();
    expect(retryingReason(figures(2, 432), DEFAULT_DELIVERY_HEALTH)).toBe("deliveries retrying: 2 results retrying, the oldest for 7m12s (longer than 5m)");
    expect(retryingReason(figures(null, null), DEFAULT_DELIVERY_HEALTH)).toBeNull();
    expect(retryingReason(null, DEFAULT_DELIVERY_HEALTH)).toBeNull();
  });
});
