import { afterEach, describe, expect, it } from "vitest";
import { createDispatcher } from "../../src/index.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { answeringRunTasks, attachTask, createTask } from "../helpers/run-tasks.js";
import { manualClock, MINUTE } from "../delivery/support.js";

// decision D31: attempts older than `attempts.retention` are pruned. The storage removes them in
// batches (500 at a time); one prune keeps asking for batches until one comes back short, so a
// retry load that made more than a batch of attempts since the last prune is cleared in one call.

const unavailable = answeringRunTasks(503);

/** A result keeps its newest 20 attempts; 26 results retried 20 times each make 520, more than one batch of 500. */
const RESULTS = 26;
const ATTEMPTS_EACH = 20;

let app: TestApp | undefined;
afterEach(async () => {
  await app?.runplane.close();
  app = undefined;
});

describe("pruning delivery attempts under retry load (D31)", () => {
  it("removes every attempt past the retention in one prune, more than one storage batch of them", async () => {
    const clock = manualClock();
    app = await createTestApp({ clock, transport: unavailable, publicUrl: "https://runplane.example", deadline: { idle: "2h", max: "2h" }, attempts: { retention: "1h" } });
    for (let i = 0; i < RESULTS; i++) await attachTask(app, await createTask(app, `scanner-${i}`), "mandatory");
    const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    await app.runplane.runTasks.startStage(run.id, "post_plan");
    const resultIds = (await app.runplane.runTasks.listResults(stages[0]!.id)).map((r) => r.id);
    expect(resultIds).toHaveLength(RESULTS);

    const dispatcher = createDispatcher(app.runplane, { random: () => 0, owner: "test" });
    for (let i = 0; i < ATTEMPTS_EACH; i++) {
      expect(await dispatcher.tick()).toMatchObject({ attempted: RESULTS, failed: RESULTS });
      clock.advance(MINUTE + 1);
    }
    const kept = async (): Promise<number[]> =>
      Promise.all(resultIds.map(async (id) => (await app!.runplane.runTasks.listDeliveryAttempts(id, { offset: 0, limit: 1 })).total));
    expect(await kept()).toStrictEqual(resultIds.map(() => ATTEMPTS_EACH));

    const attempts = app.runplane.runTasks.deliveries.attempts;
    // Still within the retention: nothing goes.
    expect(await attempts.prune()).toBe(0);
    // An hour after the newest attempt every one of them is past it.
    clock.advance(60 * MINUTE);
    expect(await attempts.prune()).toBe(RESULTS * ATTEMPTS_EACH);
    expect(await kept()).toStrictEqual(resultIds.map(() => 0));
    expect(await attempts.prune()).toBe(0);
  });
});
