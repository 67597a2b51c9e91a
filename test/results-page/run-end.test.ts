import { afterEach, describe, expect, it } from "vitest";
import { runVerdict, type VerdictStage } from "../../src/results-page/verdict.js";
import { attachTask, callbackBody, createTask, deliverDue, runTaskApp, sendCallback, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";
import { STORAGES } from "../helpers/storages.js";
import { resultsPageFor } from "./fixtures.js";

/** decision D47: the page of a run whose story ended says where it stopped, in sentences. */

const s = (stage: VerdictStage["stage"], status: VerdictStage["status"], started = status !== "pending"): VerdictStage => ({
  stage,
  status,
  overridden: false,
  statusTimestamps: started ? { "running-at": "2026-01-01T00:00:00.000+00:00" } : {},
});

describe("the verdict of a run that stopped", () => {
  it("reads as a sentence for every way a stage stops the run", () => {
    expect(runVerdict([s("post_plan", "unreachable")]).text).toBe("Did not pass: the post-plan stage was unreachable.");
    expect(runVerdict([s("post_plan", "canceled")]).text).toBe("Did not pass: the post-plan stage was canceled.");
    expect(runVerdict([s("post_plan", "failed")]).text).toBe("Did not pass: the post-plan stage failed.");
    expect(runVerdict([s("post_plan", "errored")]).text).toBe("Did not pass: the post-plan stage errored.");
  });

  it("names the stage that stopped the run, not the later ones it never reached", () => {
    const stages = [s("pre_plan", "passed"), s("post_plan", "failed"), s("pre_apply", "unreachable", false)];
    expect(runVerdict(stages)).toEqual({ tone: "failed", text: "Did not pass: the post-plan stage failed." });
  });

  it("says the run ended before a stage when the host ended it before any stage stopped it", () => {
    const stages = [s("pre_plan", "passed"), s("post_plan", "unreachable", false), s("pre_apply", "unreachable", false)];
    expect(runVerdict(stages).text).toBe("Did not pass: the run ended before the post-plan stage.");
  });
});

describe("the run page of a run that stopped", () => {
  let dispose = () => {};
  afterEach(() => dispose());

  async function get(a: RunTaskApp, runId: string): Promise<string> {
    const response = await resultsPageFor(a)(new Request(`http://localhost/app/runs/${runId}`, { headers: { authorization: `Bearer ${a.ownerToken}` } }));
    expect(response.status).toBe(200);
    return response.text();
  }

  it("shows each stage the run never reached as not reached, naming where it stopped", async () => {
    const a = await runTaskApp(STORAGES[0]!, (d) => (dispose = d));
    await attachTask(a, await createTask(a, "gate"), "mandatory", ["post_plan", "pre_apply"]);
    const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    await a.runplane.runTasks.startStage(run.id, "post_plan");
    await deliverDue(a);
    const [result] = await a.runplane.runTasks.listResults(stages[0]!.id);
    await sendCallback(a, result!.id, await tokenOf(a, result!.id), callbackBody("failed"));

    const html = await get(a, run.id);
    expect(html).toContain(`role="status">Did not pass: the post-plan stage failed.</p>`);
    expect(html).toContain(`<span class="badge status-unreachable">unreachable</span>`);
    expect(html).toContain(`<p class="not-reached">Not reached: the run stopped at post-plan.</p>`);
    expect(html.match(/Not reached/g)).toHaveLength(1);
  });

  it("says a stage was not reached because the run ended, when the host ended it", async () => {
    const a = await runTaskApp(STORAGES[0]!, (d) => (dispose = d));
    await attachTask(a, await createTask(a, "notes"), "advisory", ["post_apply"]);
    const { run } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    await a.runplane.runTasks.endRun(run.id);
    const html = await get(a, run.id);
    expect(html).toContain(`<p class="not-reached">Not reached: the run ended before this stage.</p>`);
    expect(html).toContain(`role="status">Did not pass: the run ended before the post-apply stage.</p>`);
  });
});
