import { afterEach, describe, expect, it } from "vitest";
import type { StageStatusEvent } from "../../src/index.js";
import { callbackBody, outcomeItem, runTaskApp, sendCallback, startedRun, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";
import { STORAGES, type StorageSetup } from "../helpers/storages.js";

/** The same storage, counting how often a stage's results are read in full. */
function counting(setup: StorageSetup): { setup: StorageSetup; reads: () => number } {
  let reads = 0;
  return {
    reads: () => reads,
    setup: {
      name: setup.name,
      create() {
        const made = setup.create();
        const listByStage = made.storage.taskResults.listByStage.bind(made.storage.taskResults);
        made.storage.taskResults.listByStage = (stageId) => {
          reads++;
          return listByStage(stageId);
        };
        return made;
      },
    },
  };
}

describe.each(STORAGES)("callbacks for one stage arriving together ($name)", (base) => {
  let dispose = () => {};
  afterEach(() => dispose());

  async function tenResults(): Promise<{ a: RunTaskApp; stageId: string; tokens: [string, string][]; reads: () => number; events: StageStatusEvent[] }> {
    const { setup, reads } = counting(base);
    const a = await runTaskApp(setup, (d) => (dispose = d));
    const { stageId, resultIds } = await startedRun(a, Array.from({ length: 10 }, (_, i) => (i % 2 ? "advisory" : "mandatory")));
    const tokens: [string, string][] = [];
    for (const id of resultIds) tokens.push([id, await tokenOf(a, id)]);
    const events: StageStatusEvent[] = [];
    a.runplane.runTasks.on("stage-status", (e) => void events.push(e));
    return { a, stageId, tokens, reads, events };
  }

  it("settles the stage once, reading its results in one pass plus at most one more", async () => {
    const { a, stageId, tokens, reads, events } = await tenResults();
    const before = reads();
    const answers = await Promise.all(tokens.map(([id, token]) => sendCallback(a, id, token, callbackBody("passed", {}, [outcomeItem("A")]))));
    expect(answers.map((r) => r.status)).toStrictEqual(Array(10).fill(200));
    expect((await a.runplane.runTasks.getStageById(stageId))!.status).toBe("passed");
    expect(events.map((e) => `${e.from}->${e.to}`)).toStrictEqual(["running->passed"]);
    expect(reads() - before).toBeLessThanOrEqual(2);
  });

  it("answers each callback only once the stage reflects it, whichever callback fails the stage", async () => {
    const { a, stageId, tokens } = await tenResults();
    const answers = await Promise.all(
      tokens.map(([id, token], i) =>
        sendCallback(a, id, token, callbackBody(i === 8 ? "failed" : "passed")).then(async (r) => ({
          status: r.status,
          stage: (await a.runplane.runTasks.getStageById(stageId))!.status,
        })),
      ),
    );
    expect(answers.every((r) => r.status === 200)).toBe(true);
    // The failing callback is answered only after a pass that saw its result.
    expect(answers[8]!.stage).toBe("failed");
    expect(answers.map((r) => r.stage)).not.toContain("passed");
    expect((await a.runplane.runTasks.getStageById(stageId))!.status).toBe("failed");
  });
});
