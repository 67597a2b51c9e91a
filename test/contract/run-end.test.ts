import { afterEach, describe, expect, it } from "vitest";
import { attachTask, callbackBody, createTask } from "../helpers/run-tasks.js";
import { listDocument, problems } from "./go-tfe-shapes.js";
import { startContractServer, type ContractServer } from "./harness.js";

/**
 * decision D47 as go-tfe reads it: `TaskStages.List` of a run a mandatory failure stopped. go-tfe's
 * TaskStageStatus names `canceled`, `errored` and `unreachable` (task_stages.go), and a client that
 * waits for every stage to be final (as the Terraform CLI waits on its stage) now returns.
 */

const GO_TFE_STAGE_STATUSES = ["pending", "running", "passed", "failed", "awaiting_override", "canceled", "errored", "unreachable"];

describe("go-tfe lists the stages of a run that stopped", () => {
  let server: ContractServer | undefined;
  afterEach(async () => server?.close());

  it("decodes every stage, each final: the failed one and the unreachable ones after it", async () => {
    const s = (server = await startContractServer());
    const { app } = s;
    await attachTask(app, await createTask(app, "gate"), "mandatory", ["post_plan", "pre_apply"]);
    await attachTask(app, await createTask(app, "notes"), "advisory", ["post_apply"]);
    const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go" });
    await app.runplane.runTasks.startStage(run.id, "post_plan");
    const [result] = await app.runplane.runTasks.listResults(stages[0]!.id);
    await app.runplane.runTasks.callback(result!.id, await s.accessToken(result!.id), callbackBody("failed"));

    const list = await s.call("GET", `/runs/${run.id}/task-stages`);
    expect(problems(listDocument("TaskStage"), list.json)).toStrictEqual([]);
    const got = (list.json.data as { attributes: { stage: string; status: string; "status-timestamps": Record<string, string> } }[]).map((d) => d.attributes);
    expect(got.map((a) => `${a.stage}:${a.status}`)).toStrictEqual(["post_plan:failed", "pre_apply:unreachable", "post_apply:unreachable"]);
    for (const a of got) expect(GO_TFE_STAGE_STATUSES).toContain(a.status);
    expect(got[1]!["status-timestamps"]).toHaveProperty("unreachable-at");
  });
});
