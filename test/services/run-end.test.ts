import { afterEach, describe, expect, it } from "vitest";
import { attachTask, callbackBody, createTask, deliverDue, runTaskApp, sendCallback, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";
import { STORAGES } from "../helpers/storages.js";

/**
 * decision D47: a run whose story ends. A stage that stops the run (a mandatory failure) leaves no
 * later stage pending: each becomes `unreachable` ("could not be executed"), as its results do;
 * a canceled run cancels them; the host's `endRun` says its run ended and no stage it never
 * started will run (post_apply of a run never applied).
 */
describe.each(STORAGES)("a run whose story ends ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());

  async function fourStages(): Promise<{ a: RunTaskApp; runId: string }> {
    const a = await runTaskApp(setup, (d) => (dispose = d));
    await attachTask(a, await createTask(a, "gate"), "mandatory", ["pre_plan", "post_plan", "pre_apply"]);
    await attachTask(a, await createTask(a, "notes"), "advisory", ["post_apply"]);
    const { run } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    return { a, runId: run.id };
  }

  const statuses = async (a: RunTaskApp, runId: string) =>
    Object.fromEntries((await a.runplane.runTasks.listStages(runId)).items.map((s) => [s.stage, s.status]));

  async function failStage(a: RunTaskApp, runId: string, stage: "pre_plan" | "post_plan") {
    const started = await a.runplane.runTasks.startStage(runId, stage);
    await deliverDue(a);
    const [result] = await a.runplane.runTasks.listResults(started.id);
    expect((await sendCallback(a, result!.id, await tokenOf(a, result!.id), callbackBody("failed"))).status).toBe(200);
  }

  it("makes every later stage and its results unreachable once a mandatory stage fails", async () => {
    const { a, runId } = await fourStages();
    await a.runplane.runTasks.startStage(runId, "pre_plan");
    await deliverDue(a);
    const pre = (await a.runplane.runTasks.getStage(runId, "pre_plan"))!;
    const [preResult] = await a.runplane.runTasks.listResults(pre.id);
    await sendCallback(a, preResult!.id, await tokenOf(a, preResult!.id), callbackBody("passed"));
    await failStage(a, runId, "post_plan");

    expect(await statuses(a, runId)).toStrictEqual({ pre_plan: "passed", post_plan: "failed", pre_apply: "unreachable", post_apply: "unreachable" });
    const later = (await a.runplane.runTasks.getStage(runId, "pre_apply"))!;
    expect(later.statusTimestamps).toHaveProperty("unreachable-at");
    expect(later.statusTimestamps).not.toHaveProperty("running-at");
    expect((await a.runplane.runTasks.listResults(later.id)).map((r) => r.status)).toStrictEqual(["unreachable"]);
    // A stage the run never reaches cannot be started afterwards.
    await expect(a.runplane.runTasks.startStage(runId, "pre_apply")).rejects.toMatchObject({ status: 409 });
  });

  it("announces each later stage's change as a stage-status event", async () => {
    const { a, runId } = await fourStages();
    const seen: string[] = [];
    a.runplane.runTasks.on("stage-status", (e) => void seen.push(`${e.stage}:${e.from}->${e.to}`));
    await failStage(a, runId, "pre_plan");
    expect(seen).toEqual(expect.arrayContaining(["post_plan:pending->unreachable", "pre_apply:pending->unreachable", "post_apply:pending->unreachable"]));
  });

  it("cancels the unfinished stages of a canceled run, the ones never started included", async () => {
    const { a, runId } = await fourStages();
    await a.runplane.runTasks.startStage(runId, "pre_plan");
    const stages = await a.runplane.runTasks.cancelRun(runId);
    expect(stages.map((s) => s.status)).toStrictEqual(["canceled", "canceled", "canceled", "canceled"]);
  });

  it("endRun: a run the host ended without applying leaves no stage pending, and running ones go on", async () => {
    const { a, runId } = await fourStages();
    await a.runplane.runTasks.startStage(runId, "pre_plan");
    const ended = await a.runplane.runTasks.endRun(runId);
    expect(ended.map((s) => `${s.stage}:${s.status}`)).toStrictEqual(["pre_plan:running", "post_plan:unreachable", "pre_apply:unreachable", "post_apply:unreachable"]);
    // Idempotent: the host may say it twice.
    expect((await a.runplane.runTasks.endRun(runId)).map((s) => s.status)).toStrictEqual(["running", "unreachable", "unreachable", "unreachable"]);
    await expect(a.runplane.runTasks.endRun("run-missing")).rejects.toMatchObject({ status: 404 });
  });
});
