import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { hmacKeyBinding } from "../../src/services/run-task-config.js";
import { sqliteFileSetup, STORAGES } from "../helpers/storages.js";
import {
  attachTask,
  callbackBody,
  createTask,
  runTaskApp,
  sendCallback,
  startedRun,
  taskBody,
  tokenOf,
  workspaceTaskBody,
  type RunTaskApp,
} from "../helpers/run-tasks.js";

const TASKS = "/api/v2/organizations/acme/tasks";
const WS_TASKS = "/api/v2/workspaces/ws-a/tasks";
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe.each(STORAGES)("run task configuration over HTTP ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = (options: Parameters<typeof runTaskApp>[2] = {}): Promise<RunTaskApp> =>
    runTaskApp(setup, (d) => (dispose = d), options);

  it("creates an organization run task with 201; hmac-key is write-only (always null) and sealed at rest", async () => {
    const a = await app();
    const res = await a.call("POST", TASKS, {
      body: taskBody({ name: "scanner", url: "https://scanner.example/hook", description: "d", "hmac-key": "s3cret" }),
    });
    expect(res.status).toBe(201);
    const data = res.json.data;
    expect(data.type).toBe("tasks");
    expect(data.id).toMatch(/^task-[0-9A-Za-z]{16}$/);
    expect(data.attributes).toStrictEqual({
      name: "scanner",
      url: "https://scanner.example/hook",
      description: "d",
      category: "task",
      enabled: true,
      "hmac-key": null,
      "global-configuration": { enabled: false, stages: [], "enforcement-level": "advisory" },
      "created-at": expect.stringMatching(ISO),
      "updated-at": expect.stringMatching(ISO),
    });
    expect(data.attributes["updated-at"]).toBe(data.attributes["created-at"]);
    expect(data.relationships.organization.data).toStrictEqual({ type: "organizations", id: "acme" });
    expect(data.relationships["agent-pool"]).toStrictEqual({ data: null });
    expect(data.links.self).toBe(`/api/v2/tasks/${data.id}`);
    const stored = await a.storage.runTasks.get(data.id);
    expect(stored!.hmacKey).not.toContain("s3cret");
    expect(a.keyring.open(stored!.hmacKey!, hmacKeyBinding(data.id))).toBe("s3cret");
    // decision D11: the row binding means the sealed key cannot be moved to another task.
    expect(() => a.keyring.open(stored!.hmacKey!, hmacKeyBinding("task-other"))).toThrow();
  });

  it("lets the host's code create a task with a fixed id (programmatic only); an existing id is 409", async () => {
    const a = await app();
    const tasks = a.runplane.runTasks.tasks;
    const created = await tasks.create("acme", { name: "fixed", url: "https://fixed.example/hook", "hmac-key": "k" }, { id: "task-demo" });
    expect(created).toMatchObject({ id: "task-demo", name: "fixed", hasHmacKey: true });
    expect((await a.call("GET", "/api/v2/tasks/task-demo")).status).toBe(200);
    expect(a.keyring.open((await a.storage.runTasks.get("task-demo"))!.hmacKey!, hmacKeyBinding("task-demo"))).toBe("k");
    await expect(tasks.create("acme", { name: "other", url: "https://fixed.example/hook" }, { id: "task-demo" })).rejects.toMatchObject({
      code: "conflict",
    });
  });

  it("reads, lists (paginated), updates and deletes tasks", async () => {
    const a = await app();
    const ids = [];
    for (const name of ["a", "b", "c"]) ids.push(await createTask(a, name));
    const page = await a.call("GET", `${TASKS}?page[size]=2`);
    expect(page.json.data.map((t: any) => t.attributes.name)).toStrictEqual(["a", "b"]);
    expect(page.json.meta.pagination).toMatchObject({ "total-count": 3, "next-page": 2 });
    const before = (await a.call("GET", `/api/v2/tasks/${ids[0]}`)).json.data.attributes;
    expect(before.name).toBe("a");

    const patched = await a.call("PATCH", `/api/v2/tasks/${ids[0]}`, { body: taskBody({ enabled: false, "hmac-key": "new-key" }) });
    expect(patched.status).toBe(200);
    expect(patched.json.data.attributes).toMatchObject({ name: "a", enabled: false, "hmac-key": null, "created-at": before["created-at"] });
    expect(patched.json.data.attributes["updated-at"] > before["updated-at"]).toBe(true);
    expect((await a.call("PATCH", `/api/v2/tasks/${ids[0]}`, { body: { data: { type: "tasks", id: "task-other", attributes: {} } } })).status).toBe(409);
    const removeKey = await a.call("PATCH", `/api/v2/tasks/${ids[0]}`, { body: taskBody({ "hmac-key": null }) });
    expect(removeKey.status).toBe(200);
    expect((await a.storage.runTasks.get(ids[0]!))!.hmacKey).toBeNull();

    const del = await a.call("DELETE", `/api/v2/tasks/${ids[0]}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await a.call("GET", `/api/v2/tasks/${ids[0]}`)).status).toBe(404);
    expect((await a.call("DELETE", `/api/v2/tasks/${ids[0]}`)).status).toBe(404);
  });

  it("links a task's workspace tasks across workspaces, and includes them and their workspaces on request", async () => {
    const a = await app();
    const taskId = await createTask(a, "scanner");
    const other = await createTask(a, "other");
    const fresh = (await a.call("GET", `/api/v2/tasks/${taskId}`)).json.data;
    expect(fresh.relationships["workspace-tasks"]).toStrictEqual({ data: [] });
    const onA = await attachTask(a, taskId, "mandatory");
    const onB = await attachTask(a, taskId, "advisory", ["pre_plan"], "ws-b");
    await attachTask(a, other, "advisory");
    const linkage = [onA, onB].map((id) => ({ type: "workspace-tasks", id }));

    const shown = await a.call("GET", `/api/v2/tasks/${taskId}`);
    expect(shown.json.data.relationships["workspace-tasks"].data).toStrictEqual(linkage);
    expect(shown.json.included).toBeUndefined();

    for (const include of ["workspace_tasks", "workspace-tasks"]) {
      const res = await a.call("GET", `/api/v2/tasks/${taskId}?include=${include}`);
      expect(res.status).toBe(200);
      expect(res.json.included.map((r: any) => [r.type, r.id])).toStrictEqual([["workspace-tasks", onA], ["workspace-tasks", onB]]);
      expect(res.json.included[1].attributes).toMatchObject({ "enforcement-level": "advisory", stages: ["pre_plan"] });
      expect(res.json.included[1].relationships.workspace.data).toStrictEqual({ type: "workspaces", id: "ws-b" });
    }

    const withWorkspaces = await a.call("GET", `${TASKS}?include=workspace_tasks.workspace`);
    expect(withWorkspaces.status).toBe(200);
    const byTask = new Map(withWorkspaces.json.data.map((t: any) => [t.id, t.relationships["workspace-tasks"].data.map((w: any) => w.id)]));
    expect(byTask.get(taskId)).toStrictEqual([onA, onB]);
    expect(byTask.get(other)).toHaveLength(1);
    const included = withWorkspaces.json.included.map((r: any) => `${r.type}:${r.id}`);
    expect(included.filter((k: string) => k.startsWith("workspaces:")).sort()).toStrictEqual(["workspaces:ws-a", "workspaces:ws-b"]);
    expect(included.filter((k: string) => k.startsWith("workspace-tasks:"))).toHaveLength(3);
    const wsB = withWorkspaces.json.included.find((r: any) => r.type === "workspaces" && r.id === "ws-b");
    expect(wsB.attributes.name).toBe("beta-ws");

    expect((await a.call("DELETE", `/api/v2/workspaces/ws-a/tasks/${onA}`)).status).toBe(204);
    const after = (await a.call("GET", `/api/v2/tasks/${taskId}`)).json.data.relationships["workspace-tasks"].data;
    expect(after).toStrictEqual([{ type: "workspace-tasks", id: onB }]);
  });

  it.each(["workspace", "task_results", "constructor", "__proto__", "workspace_tasks.task"])(
    "answers 400 to an include it does not know (%s)",
    async (include) => {
      const a = await app();
      const taskId = await createTask(a, "scanner");
      for (const path of [`/api/v2/tasks/${taskId}`, TASKS]) {
        const res = await a.call("GET", `${path}?include=${include}`);
        expect(res.status).toBe(400);
        expect(res.json.errors[0]).toMatchObject({ status: "400", detail: `Invalid include parameter: ${include}` });
      }
    },
  );

  it("stores and returns global-configuration; a PATCH replaces only the members it sends", async () => {
    const a = await app();
    const global = { enabled: true, stages: ["post_plan", "pre_plan"], "enforcement-level": "mandatory" };
    const created = await a.call("POST", TASKS, {
      body: taskBody({ name: "org-wide", url: "https://org-wide.example/hook", "global-configuration": global }),
    });
    expect(created.status).toBe(201);
    const id = created.json.data.id;
    const expected = { enabled: true, stages: ["pre_plan", "post_plan"], "enforcement-level": "mandatory" };
    expect(created.json.data.attributes["global-configuration"]).toStrictEqual(expected);
    expect((await a.call("GET", `/api/v2/tasks/${id}`)).json.data.attributes["global-configuration"]).toStrictEqual(expected);
    expect((await a.runplane.runTasks.tasks.get(id)).globalConfiguration).toStrictEqual({
      enabled: true,
      stages: ["pre_plan", "post_plan"],
      enforcementLevel: "mandatory",
    });

    const patched = await a.call("PATCH", `/api/v2/tasks/${id}`, { body: taskBody({ "global-configuration": { enabled: false } }) });
    expect(patched.status).toBe(200);
    expect(patched.json.data.attributes["global-configuration"]).toStrictEqual({ ...expected, enabled: false });
    const listed = (await a.call("GET", TASKS)).json.data.find((t: any) => t.id === id);
    expect(listed.attributes["global-configuration"]).toStrictEqual({ ...expected, enabled: false });
    const untouched = await a.call("PATCH", `/api/v2/tasks/${id}`, { body: taskBody({ description: "d" }) });
    expect(untouched.json.data.attributes["global-configuration"]).toStrictEqual({ ...expected, enabled: false });
  });

  it.each<[string, unknown, string]>([
    ["a non-object", "yes", "/data/attributes/global-configuration"],
    ["a non-boolean enabled", { enabled: "true" }, "/data/attributes/global-configuration/enabled"],
    ["an unknown stage", { stages: ["pre_destroy"] }, "/data/attributes/global-configuration/stages/0"],
    ["a repeated stage", { stages: ["pre_plan", "pre_plan"] }, "/data/attributes/global-configuration/stages"],
    ["an unknown level", { "enforcement-level": "strict" }, "/data/attributes/global-configuration/enforcement-level"],
    ["enabled without stages", { enabled: true }, "/data/attributes/global-configuration/stages"],
    ["mandatory on post_apply", { enabled: true, stages: ["post_apply"], "enforcement-level": "mandatory" }, "/data/attributes/global-configuration/stages"],
  ])("refuses a global-configuration with %s (422 with a pointer), storing nothing", async (_, global, pointer) => {
    const a = await app();
    const res = await a.call("POST", TASKS, { body: taskBody({ name: "g", url: "https://g.example/hook", "global-configuration": global }) });
    expect(res.status).toBe(422);
    expect(res.json.errors[0].source.pointer).toBe(pointer);
    expect((await a.call("GET", TASKS)).json.data).toStrictEqual([]);
    const id = await createTask(a, "kept");
    const patched = await a.call("PATCH", `/api/v2/tasks/${id}`, { body: taskBody({ "global-configuration": global }) });
    expect(patched.status).toBe(422);
    expect(patched.json.errors[0].source.pointer).toBe(pointer);
    const shown = (await a.call("GET", `/api/v2/tasks/${id}`)).json.data.attributes["global-configuration"];
    expect(shown).toStrictEqual({ enabled: false, stages: [], "enforcement-level": "advisory" });
  });

  it("validates task attributes with pointers", async () => {
    const a = await app();
    const cases: [Record<string, unknown>, string][] = [
      [{ url: "https://x.example" }, "/data/attributes/name"],
      [{ name: "n" }, "/data/attributes/url"],
      [{ name: "n", url: "ftp://x.example" }, "/data/attributes/url"],
      [{ name: "n", url: "/relative/path" }, "/data/attributes/url"],
      [{ name: "n", url: "https://x.example", category: "other" }, "/data/attributes/category"],
      [{ name: "n", url: "https://x.example", enabled: "yes" }, "/data/attributes/enabled"],
    ];
    for (const [attributes, pointer] of cases) {
      const res = await a.call("POST", TASKS, { body: taskBody(attributes) });
      expect(res.status, pointer).toBe(422);
      expect(res.json.errors[0].source.pointer).toBe(pointer);
    }
    await createTask(a, "dup");
    const dup = await a.call("POST", TASKS, { body: taskBody({ name: "dup", url: "https://x.example" }) });
    expect(dup.status).toBe(422);
    expect(dup.json.errors[0]).toMatchObject({ detail: "Name has already been taken", source: { pointer: "/data/attributes/name" } });
    expect((await a.call("POST", TASKS, { body: { data: { type: "vars", attributes: {} } } })).status).toBe(422);
    expect((await a.call("POST", "/api/v2/organizations/nope/tasks", { body: taskBody({ name: "n", url: "https://x.example" }) })).status).toBe(404);
  });

  it("manages workspace tasks: create 201, list, show, update, delete", async () => {
    const a = await app();
    const taskId = await createTask(a, "scanner");
    const created = await a.call("POST", WS_TASKS, {
      body: workspaceTaskBody(taskId, { "enforcement-level": "mandatory", stages: ["post_plan", "pre_plan"] }),
    });
    expect(created.status).toBe(201);
    const data = created.json.data;
    expect(data.type).toBe("workspace-tasks");
    expect(data.id).toMatch(/^wstask-[0-9A-Za-z]{16}$/);
    expect(data.attributes).toMatchObject({ "enforcement-level": "mandatory", stage: "pre_plan", stages: ["pre_plan", "post_plan"] });
    expect(data.attributes["created-at"]).toMatch(ISO);
    expect(data.attributes["updated-at"]).toBe(data.attributes["created-at"]);
    expect(data.relationships.task.data).toStrictEqual({ type: "tasks", id: taskId });
    expect(data.relationships.workspace.data).toStrictEqual({ type: "workspaces", id: "ws-a" });

    const list = await a.call("GET", WS_TASKS);
    expect(list.json.data.map((w: any) => w.id)).toStrictEqual([data.id]);
    expect(list.json.meta.pagination["total-count"]).toBe(1);
    expect((await a.call("GET", `${WS_TASKS}/${data.id}`)).status).toBe(200);
    expect((await a.call("GET", `/api/v2/workspaces/ws-b/tasks/${data.id}`)).status).toBe(404);

    const patched = await a.call("PATCH", `${WS_TASKS}/${data.id}`, {
      body: { data: { type: "workspace-tasks", attributes: { "enforcement-level": "advisory", stages: ["post_apply"] } } },
    });
    expect(patched.status).toBe(200);
    expect(patched.json.data.attributes).toStrictEqual({
      "enforcement-level": "advisory",
      stage: "post_apply",
      stages: ["post_apply"],
      "created-at": data.attributes["created-at"],
      "updated-at": expect.stringMatching(ISO),
    });
    expect(patched.json.data.attributes["updated-at"] > data.attributes["created-at"]).toBe(true);
    const mandatoryPostApply = await a.call("PATCH", `${WS_TASKS}/${data.id}`, {
      body: { data: { type: "workspace-tasks", attributes: { "enforcement-level": "mandatory" } } },
    });
    expect(mandatoryPostApply.status).toBe(422);

    expect((await a.call("DELETE", `${WS_TASKS}/${data.id}`)).status).toBe(204);
    expect((await a.call("GET", `${WS_TASKS}/${data.id}`)).status).toBe(404);
  });

  it("validates workspace tasks: level, stages, post_apply only advisory, the task relationship", async () => {
    const a = await app();
    const taskId = await createTask(a, "scanner");
    const otherOrgTask = (await a.runplane.runTasks.tasks.create("other", { name: "theirs", url: "https://t.example" })).id;
    const cases: [unknown, string][] = [
      [workspaceTaskBody(taskId, { stages: ["post_plan"] }), "/data/attributes/enforcement-level"],
      [workspaceTaskBody(taskId, { "enforcement-level": "blocking" }), "/data/attributes/enforcement-level"],
      [workspaceTaskBody(taskId, { "enforcement-level": "advisory", stages: [] }), "/data/attributes/stages"],
      [workspaceTaskBody(taskId, { "enforcement-level": "advisory", stages: ["post_plan", "post_plan"] }), "/data/attributes/stages"],
      [workspaceTaskBody(taskId, { "enforcement-level": "advisory", stages: ["during_plan"] }), "/data/attributes/stages/0"],
      [workspaceTaskBody(taskId, { "enforcement-level": "mandatory", stages: ["post_apply"] }), "/data/attributes/stages"],
      [{ data: { type: "workspace-tasks", attributes: { "enforcement-level": "advisory" } } }, "/data/relationships/task"],
      [workspaceTaskBody("task-doesnotexist000", { "enforcement-level": "advisory" }), "/data/relationships/task/data/id"],
      [workspaceTaskBody(otherOrgTask, { "enforcement-level": "advisory" }), "/data/relationships/task/data/id"],
    ];
    for (const [body, pointer] of cases) {
      const res = await a.call("POST", WS_TASKS, { body });
      expect(res.status, pointer).toBe(422);
      expect(res.json.errors.map((e: any) => e.source?.pointer), pointer).toContain(pointer);
    }
    expect((await a.call("GET", WS_TASKS)).json.data).toStrictEqual([]);
    await attachTask(a, taskId, "advisory");
    const twice = await a.call("POST", WS_TASKS, { body: workspaceTaskBody(taskId, { "enforcement-level": "advisory" }) });
    expect(twice.status).toBe(422);
    const defaulted = await a.call("POST", "/api/v2/workspaces/ws-b/tasks", { body: workspaceTaskBody(taskId, { "enforcement-level": "advisory" }) });
    expect(defaulted.json.data.attributes.stages).toStrictEqual(["post_plan"]);
  });

  it("deleting a task detaches it from workspaces; runs created before keep their snapshots", async () => {
    const a = await app();
    const { stageId, resultIds } = await startedRun(a, ["mandatory"]);
    const taskId = (await a.runplane.runTasks.getResult(resultIds[0]!))!.taskId;
    expect((await a.call("DELETE", `/api/v2/tasks/${taskId}`)).status).toBe(204);
    expect((await a.call("GET", WS_TASKS)).json.data).toStrictEqual([]);
    const result = (await a.call("GET", `/api/v2/task-results/${resultIds[0]}`)).json.data.attributes;
    expect(result["task-name"]).toBe("task0");
    expect((await sendCallback(a, resultIds[0]!, await tokenOf(a, resultIds[0]!), callbackBody("passed"))).status).toBe(200);
    expect((await a.runplane.runTasks.getStageById(stageId))!.status).toBe("passed");
  });

  it("answers 404 to another organization's principal and 401 without a credential", async () => {
    const a = await app();
    const taskId = await createTask(a, "scanner");
    const wsTaskId = await attachTask(a, taskId, "advisory");
    for (const [method, path] of [
      ["GET", TASKS],
      ["GET", `/api/v2/tasks/${taskId}`],
      ["DELETE", `/api/v2/tasks/${taskId}`],
      ["GET", WS_TASKS],
      ["GET", `${WS_TASKS}/${wsTaskId}`],
      ["DELETE", `${WS_TASKS}/${wsTaskId}`],
    ] as const) {
      expect((await a.call(method, path, { token: a.otherOrgToken })).status, `${method} ${path}`).toBe(404);
      expect((await a.call(method, path, { token: null })).status, `${method} ${path}`).toBe(401);
    }
    expect((await a.call("GET", `/api/v2/tasks/${taskId}`)).status).toBe(200);
  });
});

describe("run task HMAC keys never leave (D11)", () => {
  let dispose = () => {};
  afterEach(() => dispose());

  it("keeps the key out of every response and out of the SQLite file and its WAL", async () => {
    const canary = `hmac-${randomBytes(16).toString("hex")}`;
    const setup = { name: "sqlite-file", create: () => sqliteFileSetup() };
    let file = "";
    const a = await runTaskApp(
      { name: setup.name, create: () => { const s = setup.create(); file = s.file; return s; } },
      (d) => (dispose = d),
    );
    const texts: string[] = [];
    const call = async (...args: Parameters<typeof a.call>) => {
      const res = await a.call(...args);
      texts.push(res.text);
      return res;
    };
    const id = (await call("POST", TASKS, { body: taskBody({ name: "s", url: "https://s.example", "hmac-key": canary }) })).json.data.id;
    await call("GET", TASKS);
    await call("GET", `/api/v2/tasks/${id}`);
    await call("PATCH", `/api/v2/tasks/${id}`, { body: taskBody({ "hmac-key": `${canary}-2`, name: "renamed" }) });
    await call("POST", WS_TASKS, { body: workspaceTaskBody(id, { "enforcement-level": "mandatory" }) });
    const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
    await a.runplane.runTasks.startStage(run.id, "post_plan");
    await call("GET", `/api/v2/task-stages/${stages[0]!.id}?include=task_results,run.workspace`);
    await call("GET", `/api/v2/runs/${run.id}/task-stages`);

    for (const text of texts) expect(text).not.toContain(canary);
    expect(JSON.stringify(await a.runplane.runTasks.tasks.get(id))).not.toContain(canary);
    const needle = Buffer.from(canary, "utf8");
    const files = [file, `${file}-wal`].filter(existsSync);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(readFileSync(f).includes(needle)).toBe(false);
  });
});
