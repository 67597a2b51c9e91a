import { describe, expect, it } from "vitest";
import { createDeadlineTimer } from "../../src/delivery/deadline-timer.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("deadline timer", () => {
  it("fires each deadline once, no earlier than its budget, in deadline order", async () => {
    const timer = createDeadlineTimer();
    const fired: [string, number][] = [];
    const start = performance.now();
    timer.add(60, () => fired.push(["late", performance.now() - start]));
    timer.add(20, () => fired.push(["early", performance.now() - start]));
    await sleep(120);
    expect(fired.map(([name]) => name)).toStrictEqual(["early", "late"]);
    expect(fired[0]![1]).toBeGreaterThanOrEqual(19);
    expect(fired[1]![1]).toBeGreaterThanOrEqual(59);
  });

  it("never fires a cancelled deadline, and keeps firing the others", async () => {
    const timer = createDeadlineTimer();
    const fired: string[] = [];
    const cancel = timer.add(10, () => fired.push("cancelled"));
    timer.add(20, () => fired.push("kept"));
    cancel();
    await sleep(60);
    expect(fired).toStrictEqual(["kept"]);
  });

  it("serves a thousand pending deadlines with one timer armed", async () => {
    const timer = createDeadlineTimer();
    const armed = new Set<unknown>();
    const realSetTimeout = globalThis.setTimeout;
    globalThis.setTimeout = ((fn: () => void, ms?: number) => {
      const handle = realSetTimeout(fn, ms);
      armed.add(handle);
      return handle;
    }) as typeof setTimeout;
    let count = 0;
    try {
      for (let i = 0; i < 1000; i++) timer.add(30, () => count++);
    } finally {
      globalThis.setTimeout = realSetTimeout;
    }
    expect(armed.size).toBe(1);
    await sleep(80);
    expect(count).toBe(1000);
  });
});
