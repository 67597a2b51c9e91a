import { describe, expect, it } from "vitest";
import { answering200, createTestApp, type TestApp } from "../helpers/app.js";
import { attachTask, createTask, taskBody } from "../helpers/run-tasks.js";

/**
 * Decision D34 on the wire: a run task names an agent pool of its organization with HCP Terraform's
 * `agent-pool` relationship (`agent-pools` linkage), on create, update and read; its results carry
 * `agent-pool-id`. No agent can be connected yet, so naming a pool is refused with the 422 that
 * names the pool, and nothing is written or sent.
 */

const poolRel = (id: string | null) => ({ "agent-pool": { data: id === null ? null : { type: "agent-pools", id } } });
const withPool = (attributes: Record<string, unknown>, id: string | null) => ({ data: { ...taskBody(attributes).data, relationships: poolRel(id) } });

async function setup() {
  const transport = answering200();
  const app = await createTestApp({ transport });
  await app.runplane.directory.agentPools.create({ id: "apool-a", name: "inside", organization: "acme" });
  await app.runplane.directory.agentPools.create({ id: "apool-x", name: "theirs", organization: "other" });
  return { app, transport };
}

/** Binds a task to a pool in storage, as a connected agent would have let the API do. */
async function bind(app: TestApp, taskId: string, agentPoolId: string | null): Promise<void> {
  const task = (await app.storage.runTasks.get(taskId))!;
  expect(await app.storage.runTasks.update({ ...task, agentPoolId, version: task.version + 1 }, task.version)).toStrictEqual({ ok: true });
}

describe("run tasks name an agent pool (D34)", () => {
  it("refuses to create a task for a pool without a connected agent: 422 naming the pool, nothing written or sent", async () => {
    const { app, transport } = await setup();
    const res = await app.call("POST", "/api/v2/organizations/acme/tasks", { body: withPool({ name: "scan", url: "http://10.0.0.5/hook" }, "apool-a") });
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toMatchObject({ status: "422", detail: 'no agent of pool inside (apool-a) is connected', source: { pointer: "/data/relationships/agent-pool" } });
    expect(transport.sent).toStrictEqual([]);
    expect((await app.call("GET", "/api/v2/organizations/acme/tasks")).json.data).toStrictEqual([]);
  });

  it("answers an unknown pool and another organization's pool with the same 422, naming the field", async () => {
    const { app, transport } = await setup();
    for (const id of ["apool-none", "apool-x"]) {
      const res = await app.call("POST", "/api/v2/organizations/acme/tasks", { body: withPool({ name: "scan", url: "https://scan.example/hook" }, id) });
      expect(res.status).toBe(422);
      expect(res.json.errors[0].source).toStrictEqual({ pointer: "/data/relationships/agent-pool" });
      expect(res.json.errors[0].detail).toBe(`Agent pool ${id} was not found in organization acme`);
    }
    expect(transport.sent).toStrictEqual([]);
    expect(await app.storage.runTasks.list("acme")).toStrictEqual({ items: [], total: 0 });
  });

  it("refuses a malformed relationship with a pointer into it", async () => {
    const { app } = await setup();
    const bodies: [unknown, string][] = [
      [{ "agent-pool": { data: { type: "workspaces", id: "apool-a" } } }, "/data/relationships/agent-pool/data/type"],
      [{ "agent-pool": { data: { type: "agent-pools", id: 7 } } }, "/data/relationships/agent-pool/data/id"],
      [{ "agent-pool": { data: [] } }, "/data/relationships/agent-pool/data"],
      [{ "agent-pool": "apool-a" }, "/data/relationships/agent-pool"],
    ];
    for (const [relationships, pointer] of bodies) {
      const body = { data: { type: "tasks", attributes: { name: "scan", url: "https://scan.example/hook" }, relationships } };
      const res = await app.call("POST", "/api/v2/organizations/acme/tasks", { body });
      expect([res.status, res.json.errors[0].source.pointer]).toStrictEqual([422, pointer]);
    }
  });

  it("creates a task with `agent-pool: {data: null}` like one without it, and reads it as null", async () => {
    const { app } = await setup();
    const res = await app.call("POST", "/api/v2/organizations/acme/tasks", { body: withPool({ name: "scan", url: "https://scan.example/hook" }, null) });
    expect(res.status).toBe(201);
    expect(res.json.data.relationships["agent-pool"]).toStrictEqual({ data: null });
    expect((await app.storage.runTasks.get(res.json.data.id))!.agentPoolId).toBeNull();
  });

  it("shows a bound task's pool as the relationship, on read and list", async () => {
    const { app } = await setup();
    const id = await createTask(app, "scan");
    await bind(app, id, "apool-a");
    const linkage = { data: { type: "agent-pools", id: "apool-a" } };
    expect((await app.call("GET", `/api/v2/tasks/${id}`)).json.data.relationships["agent-pool"]).toStrictEqual(linkage);
    expect((await app.call("GET", "/api/v2/organizations/acme/tasks")).json.data[0].relationships["agent-pool"]).toStrictEqual(linkage);
  });

  it("refuses an update that binds a pool, or changes a bound task's URL, while no agent is connected; nothing changes", async () => {
    const { app, transport } = await setup();
    const id = await createTask(app, "scan");
    const before = await app.storage.runTasks.get(id);
    const sent = transport.sent.length;
    const bindRes = await app.call("PATCH", `/api/v2/tasks/${id}`, { body: withPool({ description: "x" }, "apool-a") });
    expect([bindRes.status, bindRes.json.errors[0].detail]).toStrictEqual([422, 'no agent of pool inside (apool-a) is connected']);
    await bind(app, id, "apool-a");
    const bound = await app.storage.runTasks.get(id);
    const urlRes = await app.call("PATCH", `/api/v2/tasks/${id}`, { body: taskBody({ url: "http://10.0.0.9/hook" }) });
    expect(urlRes.status).toBe(422);
    expect(urlRes.json.errors[0].source).toStrictEqual({ pointer: "/data/relationships/agent-pool" });
    expect(await app.storage.runTasks.get(id)).toStrictEqual(bound);
    expect(transport.sent.length).toBe(sent);
    expect(before!.agentPoolId).toBeNull();
  });

  it("keeps a bound task's pool on an update that does not name it and sends nothing for a description", async () => {
    const { app, transport } = await setup();
    const id = await createTask(app, "scan");
    await bind(app, id, "apool-a");
    const sent = transport.sent.length;
    const res = await app.call("PATCH", `/api/v2/tasks/${id}`, { body: taskBody({ description: "scans" }) });
    expect(res.status).toBe(200);
    expect(res.json.data.relationships["agent-pool"]).toStrictEqual({ data: { type: "agent-pools", id: "apool-a" } });
    expect(transport.sent.length).toBe(sent);
  });

  it("unbinds with `data: null`: the endpoint is verified directly again first", async () => {
    const { app, transport } = await setup();
    const id = await createTask(app, "scan");
    await bind(app, id, "apool-a");
    const sent = transport.sent.length;
    const res = await app.call("PATCH", `/api/v2/tasks/${id}`, { body: withPool({}, null) });
    expect(res.status).toBe(200);
    expect(res.json.data.relationships["agent-pool"]).toStrictEqual({ data: null });
    expect(transport.sent.slice(sent).map((r) => r.url)).toStrictEqual(["https://scan.example/hook"]);
  });

  it("gives results the pool of their task when the stage starts, null for a direct task", async () => {
    const { app } = await setup();
    const pooled = await createTask(app, "pooled");
    const direct = await createTask(app, "direct");
    await attachTask(app, pooled, "advisory");
    await attachTask(app, direct, "advisory");
    const { run, stages } = await app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
    await bind(app, pooled, "apool-a");
    await app.runplane.runTasks.startStage(run.id, "post_plan");
    const results = await app.runplane.runTasks.listResults(stages[0]!.id);
    const poolOf = async (taskId: string) => {
      const r = results.find((x) => x.taskId === taskId)!;
      return (await app.call("GET", `/api/v2/task-results/${r.id}`)).json.data.attributes["agent-pool-id"];
    };
    expect(await poolOf(pooled)).toBe("apool-a");
    expect(await poolOf(direct)).toBeNull();
  });
});

describe("deleting an agent pool that a run task names (D34)", () => {
  it("is refused with a 422 naming the pool and the count, and works once no task names it", async () => {
    const { app } = await setup();
    const id = await createTask(app, "scan");
    await bind(app, id, "apool-a");
    await expect(app.runplane.directory.agentPools.delete("apool-a")).rejects.toMatchObject({
      status: 422,
      message: "agent pool inside (apool-a) cannot be deleted: 1 run task names it; change or delete those tasks first",
    });
    expect(await app.runplane.directory.agentPools.get("apool-a")).not.toBeNull();
    await bind(app, id, null);
    expect(await app.runplane.directory.agentPools.delete("apool-a")).toBe(true);
  });
});
