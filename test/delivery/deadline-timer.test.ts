import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createDeadlineTimer } from "../../src/delivery/deadline-timer.js";

// The timer reads performance.now() and arms setTimeout: both are faked, so each deadline is
// checked to the millisecond against a clock the test moves, with no real waiting.

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("deadline timer", () => {
  it("fires each deadline once, no earlier than its budget, in deadline order", () => {
    const timer = createDeadlineTimer();
    const fired: [string, number][] = [];
    const start = performance.now();
    const at = (name: string) => () => fired.push([name, performance.now() - start]);
    timer.add(60, at("late"));
    timer.add(20, at("early"));
    timer.add(22, at("next"));
    vi.advanceTimersByTime(19);
    expect(fired).toStrictEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toStrictEqual([["early", 20]]);
    vi.advanceTimersByTime(1);
    expect(fired).toStrictEqual([["early", 20]]);
    vi.advanceTimersByTime(1);
    expect(fired).toStrictEqual([
      ["early", 20],
      ["next", 22],
    ]);
    vi.advanceTimersByTime(37);
    expect(fired).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(fired).toStrictEqual([
      ["early", 20],
      ["next", 22],
      ["late", 60],
    ]);
    vi.advanceTimersByTime(1_000);
    expect(fired).toHaveLength(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("never fires a cancelled deadline, and keeps firing the others", () => {
    const timer = createDeadlineTimer();
    const fired: string[] = [];
    const cancel = timer.add(10, () => fired.push("cancelled"));
    timer.add(20, () => fired.push("kept"));
    cancel();
    vi.advanceTimersByTime(20);
    expect(fired).toStrictEqual(["kept"]);
    vi.advanceTimersByTime(1_000);
    expect(fired).toStrictEqual(["kept"]);
  });

  it("serves a thousand pending deadlines with one timer armed", () => {
    const timer = createDeadlineTimer();
    const arming = vi.spyOn(globalThis, "setTimeout");
    let count = 0;
    for (let i = 0; i < 1000; i++) timer.add(30, () => count++);
    expect(arming).toHaveBeenCalledTimes(1);
    arming.mockRestore();
    vi.advanceTimersByTime(29);
    expect(count).toBe(0);
    vi.advanceTimersByTime(1);
    expect(count).toBe(1000);
    expect(vi.getTimerCount()).toBe(0);
  });
});
