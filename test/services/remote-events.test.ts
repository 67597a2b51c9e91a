import { afterEach, describe, expect, it, vi } from "vitest";
import { silentLogger, type Logger } from "../../src/index.js";
import { createRunTaskEmitter, type ResultStatusEvent, type StageStatusEvent } from "../../src/services/run-task-events.js";
import type { StatusChange, StatusChangeFeed } from "../../src/storage/types.js";

// Decision D27: the emitter hears other processes' changes (`Storage.changes`) only while someone
// listens, emits them like its own, and keeps trying when the feed cannot be reached.

/** A feed under the test's control: `send` reaches every subscriber; `failures` subscriptions reject first. */
function fakeFeed(failures = 0) {
  const subscribers = new Set<(change: StatusChange) => void>();
  const state = { attempts: 0, stops: 0 };
  const feed: StatusChangeFeed = {
    async subscribe(listener) {
      state.attempts++;
      if (state.attempts <= failures) throw new Error("connect ECONNREFUSED");
      subscribers.add(listener);
      return async () => {
        subscribers.delete(listener);
        state.stops++;
      };
    },
  };
  return { feed, state, subscribers, send: (change: StatusChange) => subscribers.forEach((l) => l(change)) };
}

const stageChange: StatusChange = { kind: "stage", stageId: "ts-1", runId: "run-1", workspaceId: "ws-1", stage: "post_plan", from: "pending", to: "running", at: "2026-01-01T00:00:00.000Z" };
const resultChange: StatusChange = { kind: "result", taskResultId: "taskrs-1", stageId: "ts-1", runId: "run-1", stage: "post_plan", from: "running", to: "passed", at: "2026-01-01T00:00:01.000Z" };

afterEach(() => {
  vi.useRealTimers();
});

describe("run task events from other processes", () => {
  it("subscribes with the first listener, emits other processes' changes as events, and unsubscribes after the last", async () => {
    const { feed, state, subscribers, send } = fakeFeed();
    const events = createRunTaskEmitter(silentLogger, feed);
    expect(await events.listening()).toBe(false);
    expect(state.attempts).toBe(0);

    const stages: StageStatusEvent[] = [];
    const results: ResultStatusEvent[] = [];
    const offStage = events.on("stage-status", (e) => void stages.push(e));
    const offResult = events.on("result-status", (e) => void results.push(e));
    expect(await events.listening()).toBe(true);
    expect(state.attempts).toBe(1);

    send(stageChange);
    send(resultChange);
    const { kind: _s, ...stageEvent } = stageChange;
    const { kind: _r, ...resultEvent } = resultChange;
    expect(stages).toStrictEqual([stageEvent]);
    expect(results).toStrictEqual([resultEvent]);

    offStage();
    expect(subscribers.size).toBe(1);
    offResult();
    await vi.waitFor(() => expect(state.stops).toBe(1));
    expect(await events.listening()).toBe(false);
  });

  it("retries a feed that cannot be reached, with a warning, while someone listens", async () => {
    vi.useFakeTimers();
    const { feed, state } = fakeFeed(2);
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (message) => void warnings.push(message) };
    const events = createRunTaskEmitter(logger, feed);
    events.on("stage-status", () => undefined);
    expect(await events.listening()).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(state.attempts).toBe(2);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(state.attempts).toBe(3);
    expect(await events.listening()).toBe(true);
    expect(warnings).toStrictEqual(["run task events of other processes are not heard; retrying", "run task events of other processes are not heard; retrying"]);
    await events.close();
    expect(state.stops).toBe(1);
  });

  it("stops retrying once closed", async () => {
    vi.useFakeTimers();
    const { feed, state } = fakeFeed(Infinity);
    const events = createRunTaskEmitter(silentLogger, feed);
    events.on("result-status", () => undefined);
    await vi.advanceTimersByTimeAsync(0);
    await events.close();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(state.attempts).toBe(1);
  });

  it("has nothing to hear without a feed (memory, SQLite)", async () => {
    const events = createRunTaskEmitter(silentLogger);
    events.on("stage-status", () => undefined);
    expect(await events.listening()).toBe(false);
  });
});
