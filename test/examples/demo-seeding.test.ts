import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { DEMO, seedDemo, seedDemoOwners } from "../../examples/server/demo.js";
import { DEMO_TASKS, demoTasksNote, ensureDemoTasks } from "../../examples/server/integration.js";
import { createRunplane, generateKey, silentLogger, type HttpTransport, type Runplane } from "../../src/index.js";
import type { Storage } from "../../src/storage/types.js";

// decision D52: the reference server seeds its demo once per database. Demo tasks a user deleted
// (or detached from ws-demo) stay so after a restart; a restart only re-points the tasks that
// are still there at this start's integration.

const opened: Runplane[] = [];
afterEach(async () => {
  for (const r of opened.splice(0)) await r.close();
});

/** Answers every request (the verification request among them) 200. */
const accepting: HttpTransport = { send: async () => ({ status: 200, headers: {}, body: "", bodyTruncated: false }), close: async () => undefined };
const keyring = { keys: [{ id: "k1", key: generateKey() }] };

/** One start of the reference server's demo steps over `storage`, as examples/server/main.ts runs them. */
async function start(storage: Storage, url = "http://127.0.0.1:8081/run-task"): Promise<Runplane> {
  // The storage outlives each runplane here, as a database outlives a server.
  const runplane = createRunplane({ storage: { ...storage, close: async () => undefined }, logger: silentLogger, keyring, transport: accepting, egress: { allow: ["127.0.0.1/32"] } });
  opened.push(runplane);
  const seeded = await seedDemo(runplane);
  await ensureDemoTasks(runplane, { url, hmacKey: "demo-hmac-key", seed: seeded });
  return runplane;
}

const taskIds = async (r: Runplane) => (await r.runTasks.tasks.list(DEMO.organization)).items.map((t) => t.id).sort();
const attachedIds = async (r: Runplane) => (await r.runTasks.workspaceTasks.list(DEMO.workspace)).items.map((w) => w.taskId).sort();
const DEMO_IDS = DEMO_TASKS.map((t) => t.id).sort();

describe("the reference server's demo (D52)", () => {
  it("is seeded on the database's first start: both tasks, attached to ws-demo", async () => {
    const r = await start(createMemoryStorage());
    expect(await taskIds(r)).toEqual(DEMO_IDS);
    expect(await attachedIds(r)).toEqual(DEMO_IDS);
  });

  it("leaves deleted demo tasks deleted, and a detached one detached, after a restart", async () => {
    const storage = createMemoryStorage();
    const first = await start(storage);
    await first.runTasks.tasks.delete("task-demo");
    const attachment = (await first.runTasks.workspaceTasks.list(DEMO.workspace)).items.find((w) => w.taskId === "task-demo-advisory")!;
    await first.runTasks.workspaceTasks.delete(DEMO.workspace, attachment.id);
    const again = await start(storage, "http://127.0.0.1:9999/run-task");
    expect(await taskIds(again)).toEqual(["task-demo-advisory"]);
    expect(await attachedIds(again)).toEqual([]);
    // The task still there follows this start's integration.
    expect((await again.runTasks.tasks.get("task-demo-advisory"))?.url).toBe("http://127.0.0.1:9999/run-task");
  });

  // Found from outside: after the demo tasks were deleted and the server restarted, the banner
  // still said "run tasks task-demo ... on ws-demo".
  it("says in the start banner what is attached to ws-demo now, not what the first start seeded", async () => {
    const storage = createMemoryStorage();
    const first = await start(storage);
    expect(await demoTasksNote(first)).toBe("run tasks task-demo, mandatory at post_plan, and task-demo-advisory, advisory at pre_apply, on ws-demo");
    await first.runTasks.tasks.delete("task-demo");
    expect(await demoTasksNote(await start(storage))).toBe("run task task-demo-advisory, advisory at pre_apply, on ws-demo");
    await first.runTasks.tasks.delete("task-demo-advisory");
    expect(await demoTasksNote(await start(storage))).toBe("no run task attached to ws-demo (the demo tasks were deleted or detached)");
  });

  it("is seeded on the first start even when runplane token create ran on the database before", async () => {
    const storage = createMemoryStorage();
    const cli = createRunplane({ storage: { ...storage, close: async () => undefined }, logger: silentLogger, keyring, transport: accepting, egress: { allow: ["127.0.0.1/32"] } });
    opened.push(cli);
    await seedDemoOwners(cli);
    const r = await start(storage);
    expect(await taskIds(r)).toEqual(DEMO_IDS);
    expect(await attachedIds(r)).toEqual(DEMO_IDS);
  });
});
