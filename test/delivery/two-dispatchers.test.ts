import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { attachTasks, sharedFile, spawnChild, startReceiver, type Receiver, type SharedFile } from "./processes.js";
import { START } from "./support.js";

// Decision D15: two dispatchers in two processes on one SQLite file never hold a row at once, so
// each of 1,000 results gets exactly one request (the receiver counts by task_result_id).

const TASKS = 20;
const RUNS = 50;

let file: SharedFile;
let receiver: Receiver;
afterEach(async () => {
  await receiver?.close();
  await file?.dispose();
});

describe("two dispatchers on one SQLite file", () => {
  it("deliver 1,000 results with exactly one request each", async () => {
    file = await sharedFile("NORMAL");
    receiver = await startReceiver({ "/hook": () => 200 });
    await attachTasks(file, Array.from({ length: TASKS }, () => receiver.url("/hook")));
    const resultIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const { run, stages } = await file.parent.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" });
      await file.parent.runTasks.startStage(run.id, "post_plan");
      for (const r of await file.parent.runTasks.listResults(stages[0]!.id)) resultIds.push(r.id);
    }
    expect(resultIds).toHaveLength(TASKS * RUNS);

    const env = { ...file.childEnv, RUNPLANE_CLOCK: String(START + 1_000), RUNPLANE_STEP_MS: "0", RUNPLANE_WAIT_GO: "1" };
    const children = ["one", "two"].map((owner) => spawnChild({ ...env, RUNPLANE_OWNER: owner }));
    await Promise.all(children.map((c) => c.ready));
    for (const child of children) child.go();
    const exits = await Promise.all(children.map((c) => c.exit));
    for (const exit of exits) expect(exit.code, exit.stderr).toBe(0);

    expect(receiver.posts.size).toBe(resultIds.length);
    for (const id of resultIds) expect(receiver.posts.get(id), id).toHaveLength(1);
    const delivered = exits.map((e) => Number(/done delivered=(\d+)/.exec(e.stdout)?.[1]));
    expect(delivered[0]! + delivered[1]!).toBe(resultIds.length);
    expect(Math.min(...delivered)).toBeGreaterThan(0);

    // A fresh connection sees every row closed as delivered and no lease held.
    const db = new Database(file.path, { readonly: true });
    try {
      const open = db.prepare("SELECT COUNT(*) AS n FROM task_deliveries WHERE closed_at IS NULL OR delivered_at IS NULL OR lease_owner IS NOT NULL").get() as { n: number };
      expect(open.n).toBe(0);
    } finally {
      db.close();
    }
  });
});
