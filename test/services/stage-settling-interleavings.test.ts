import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import type { Storage } from "../../src/storage/types.js";
import { callbackBody, runTaskApp, sendCallback, startedRun, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";

// Interleavings the HTTP suites never force: a storage whose reads can be held after
// they ran, so a stage recompute computes from a read that a concurrent callback's write overtakes.

/** Memory storage whose next `listByStage` reads, then waits for `release()` before answering. */
function stallingStorage() {
  const storage = createMemoryStorage();
  let armed = false;
  let entered = (): void => undefined;
  let release = (): void => undefined;
  const taskResults = storage.taskResults;
  const wrapped: Storage = Object.assign(Object.create(storage) as Storage, {
    taskResults: {
      ...taskResults,
      get: taskResults.get.bind(taskResults),
      async listByStage(stageId: string) {
        const rows = await taskResults.listByStage(stageId);
        if (armed) {
          armed = false;
          entered();
          await new Promise<void>((resolve) => (release = resolve));
        }
        return rows;
      },
    },
  });
  return {
    storage: wrapped,
    /** Holds the next read; resolves once a read is being held. */
    hold: () => new Promise<void>((resolve) => ((armed = true), (entered = resolve))),
    release: () => release(),
  };
}

let dispose = (): void => undefined;
afterEach(() => dispose());

describe("stage settling under interleavings", () => {
  it("passes a stage whose last result was written while a recompute held a read from before it", async () => {
    const stalling = stallingStorage();
    const a: RunTaskApp = await runTaskApp({ name: "stalling", create: () => ({ storage: stalling.storage, dispose() {} }) }, (d) => (dispose = d));
    const { runId, resultIds } = await startedRun(a, ["mandatory", "mandatory"]);
    const [first, second] = resultIds as [string, string];
    const held = stalling.hold();
    // The first callback's recompute reads {passed, pending} and is held before it decides.
    const one = sendCallback(a, first, await tokenOf(a, first), callbackBody("passed"));
    await held;
    // The second result is written meanwhile; its callback finds the recompute in flight. Its
    // result event comes once the write is stored, in the same turn that it asks for another pass.
    const secondStored = new Promise<void>((resolve) =>
      a.runplane.runTasks.onOwn("result-status", (e) => {
        if (e.taskResultId === second) resolve();
      }),
    );
    const two = sendCallback(a, second, await tokenOf(a, second), callbackBody("passed"));
    await secondStored;
    stalling.release();
    expect((await one).status).toBe(200);
    expect((await two).status).toBe(200);
    const stage = await a.runplane.runTasks.getStage(runId, "post_plan");
    expect(stage?.status).toBe("passed");
  });

  it("raises a result's version by one with every callback it stores, so a stale compare-and-set cannot land", async () => {
    const a: RunTaskApp = await runTaskApp({ name: "memory", create: () => ({ storage: createMemoryStorage(), dispose() {} }) }, (d) => (dispose = d));
    const { resultIds } = await startedRun(a, ["mandatory"]);
    const id = resultIds[0]!;
    const token = await tokenOf(a, id);
    const before = (await a.storage.taskResults.get(id))!;
    expect((await sendCallback(a, id, token, callbackBody("running"))).status).toBe(200);
    const running = (await a.storage.taskResults.get(id))!;
    expect(running.version).toBe(before.version + 1);
    // A writer still holding the version read before the callback is refused.
    const stale = await a.storage.taskResults.transition(id, { statuses: ["pending"], version: before.version }, { ...before, message: "stale" });
    expect(stale).toBeNull();
    expect((await sendCallback(a, id, token, callbackBody("passed"))).status).toBe(200);
    expect((await a.storage.taskResults.get(id))!.version).toBe(before.version + 2);
  });
});
