import { describe, expect, it } from "vitest";
import { maxAttemptsBefore, retryDelayMs } from "../../src/delivery/retry-schedule.js";

// decisions D15 and D16: "attempt 5 of at most N" on the results page (D31) is a bound derived
// from the retry schedule and the deadline, so it must never be below what a dispatcher can do.

const WINDOW = 10 * 60_000;

/** Attempts the real schedule makes from `made` (next due at `nextAt`) before `deadline`, each taking `tookMs`. */
function simulate(random: () => number, deadline: number, made = 0, nextAt = 0, tookMs = 0, retryAfterMs: number | null = null): number {
  let count = made;
  for (let at = nextAt; at < deadline; at += tookMs + retryDelayMs(count, random, retryAfterMs)) count++;
  return count;
}

describe("the most attempts before the deadline", () => {
  it("is 18 in the default 10 minute window, the count the shortest jitter reaches", () => {
    expect(maxAttemptsBefore(0, 0, WINDOW)).toBe(18);
    expect(simulate(() => 0.999_999, WINDOW)).toBe(18);
  });

  it("is never below what the schedule makes, whatever the jitter, attempt durations or Retry-After", () => {
    for (const r of [0, 0.1, 0.5, 0.9, 0.999_999]) {
      for (const took of [0, 250, 10_000]) {
        for (const retryAfter of [null, 5_000, 120_000]) {
          expect(simulate(() => r, WINDOW, 0, 0, took, retryAfter)).toBeLessThanOrEqual(maxAttemptsBefore(0, 0, WINDOW));
          // From the middle of a delivery: 5 attempts made, the 6th due 31 s after the first.
          expect(simulate(() => r, WINDOW, 5, 31_000, took, retryAfter)).toBeLessThanOrEqual(maxAttemptsBefore(5, 31_000, WINDOW));
        }
      }
    }
  });

  it("counts the attempts made, and no attempt due at or after the deadline", () => {
    expect(maxAttemptsBefore(7, WINDOW, WINDOW)).toBe(7);
    expect(maxAttemptsBefore(7, WINDOW - 1, WINDOW)).toBe(8);
    // Exact doubling with no jitter: 1 + 1, 2, 4, 8, 16, 32 s, then the 60 s cap.
    expect(simulate(() => 0, WINDOW)).toBe(15);
    expect(maxAttemptsBefore(0, 0, WINDOW)).toBeGreaterThan(15);
  });
});
