import { afterEach, describe, expect, it } from "vitest";
import { isApiError } from "../../src/index.js";
import { createTestApp, type TestApp } from "../helpers/app.js";

// The programmatic API is the embedder's own: a missing record says which one, and how to make it.

let app: TestApp | undefined;
afterEach(async () => {
  await app?.runplane.close();
  app = undefined;
});

const thrown = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => null, (e: unknown) => e);
  if (!isApiError(error)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error;
};

describe("runTasks errors for a host's mistakes", () => {
  it("says the workspace a run names is not in the directory, and how to create it", async () => {
    app = await createTestApp();
    const error = await thrown(app.runplane.runTasks.createRun({ workspaceId: "ws-1", configurationVersionId: "cv-1", message: "hi" }));
    expect(error.status).toBe(404);
    expect(error.message).toMatch(/^workspace ws-1 is not in the directory; create it with runplane\.directory\.workspaces\.create/);
    expect(error.items[0]?.detail).toBe(error.message);
  });

  it("says no run task is attached to the workspace for a stage the run does not have", async () => {
    app = await createTestApp();
    const { run } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "hi" });
    const error = await thrown(app.runplane.runTasks.startStage(run.id, "post_plan"));
    expect(error.status).toBe(404);
    expect(error.message).toMatch(/^run .+ has no post_plan task stage: no enabled run task was attached to workspace ws-a for post_plan when the run was created/);
  });

  it("says a run it does not know was never created", async () => {
    app = await createTestApp();
    const error = await thrown(app.runplane.runTasks.startStage("run-nope", "post_plan"));
    expect(error.status).toBe(404);
    expect(error.message).toMatch(/^run run-nope does not exist; create it with runplane\.runTasks\.createRun/);
  });
});
