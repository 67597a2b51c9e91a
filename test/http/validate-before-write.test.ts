import { afterEach, describe, expect, it } from "vitest";
import { snapshotSqlite } from "../helpers/sqlite-snapshot.js";
import { callbackBody, createTask, runTaskApp, sendCallback, startedRun, taskBody, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";

// decision D30: a request is validated whole (query included) before anything is written, so a
// 4xx leaves no trace. Each of these wrote first and refused the include afterwards.

let dispose = (): void => undefined;
afterEach(() => dispose());

async function app(options: { overridableTasks?: boolean } = {}): Promise<RunTaskApp & { snapshot(): string }> {
  const { setup, snapshot } = snapshotSqlite();
  return Object.assign(await runTaskApp(setup, (d) => (dispose = d), options), { snapshot });
}

/** Sends the request with `?include=nope`: 400 naming the include, and not one row changed. */
async function refusedWithoutTrace(a: RunTaskApp & { snapshot(): string }, method: string, path: string, body?: unknown) {
  const before = a.snapshot();
  const res = await a.call(method, `${path}?include=nope`, body === undefined ? {} : { body });
  expect(res.status).toBe(400);
  expect(res.json.errors[0]).toMatchObject({ status: "400", detail: "Invalid include parameter: nope", source: { parameter: "include" } });
  expect(a.snapshot()).toBe(before);
}

describe("a write with an invalid include (D30)", () => {
  it("creates no task", async () => {
    const a = await app();
    await refusedWithoutTrace(a, "POST", "/api/v2/organizations/acme/tasks", taskBody({ name: "scan", url: "https://scan.example/hook" }));
    expect((await a.call("GET", "/api/v2/organizations/acme/tasks")).json.data).toEqual([]);
  });

  it("stores no change to a task", async () => {
    const a = await app();
    const id = await createTask(a, "scan");
    await refusedWithoutTrace(a, "PATCH", `/api/v2/tasks/${id}`, taskBody({ name: "renamed" }));
    expect((await a.call("GET", `/api/v2/tasks/${id}`)).json.data.attributes.name).toBe("scan");
  });

  it("does not override the stage", async () => {
    const a = await app({ overridableTasks: true });
    const { stageId, resultIds } = await startedRun(a, ["mandatory"]);
    expect((await sendCallback(a, resultIds[0]!, await tokenOf(a, resultIds[0]!), callbackBody("failed"))).status).toBe(200);
    await refusedWithoutTrace(a, "POST", `/api/v2/task-stages/${stageId}/actions/override`, { comment: "ship it" });
    expect((await a.call("GET", `/api/v2/task-stages/${stageId}`)).json.data.attributes.status).toBe("awaiting_override");
  });

  it("still answers a valid include on a write with the included resources", async () => {
    const a = await app();
    const res = await a.call("POST", "/api/v2/organizations/acme/tasks?include=workspace_tasks", { body: taskBody({ name: "scan", url: "https://scan.example/hook" }) });
    expect(res.status).toBe(201);
    expect(res.json.included).toEqual([]);
  });
});
