import { afterEach, describe, expect, it } from "vitest";
import { FINAL_RESULT_STATUSES, stageStatusOf } from "../../src/domain/stage-machine.js";
import type { TaskResultRecord } from "../../src/schemas/run-task-records.js";
import { callbackBody } from "../helpers/run-tasks.js";
import { attachTasks, sharedFile, spawnChild, startReceiver, type Receiver, type SharedFile } from "./processes.js";
import { START } from "./support.js";

// Crash safety of the outbox (decision D15): a dispatcher process over a SQLite file is killed
// with SIGKILL at a named failpoint and restarted. Every result still reaches a final state, no
// final state ever changes, and a crash costs each request at most one extra send, always for the
// same task_result_id with the same bytes. Three integrations: one calls back `passed` before it
// answers 200, one answers 200 and never calls back (errored at the deadline), one answers 500
// (unreachable at the deadline). Two runs, so six results.

const LEASE_MS = 30_000;
const FAILPOINTS = ["after-enqueue", "after-claim", "after-send-before-record", "during-retry-scheduling", "after-settle-batch", "during-sweep"] as const;
const isFinal = (r: TaskResultRecord): boolean => (FINAL_RESULT_STATUSES as readonly string[]).includes(r.status);

let file: SharedFile;
let receiver: Receiver;
afterEach(async () => {
  await receiver?.close();
  await file?.dispose();
});

async function world() {
  file = await sharedFile();
  receiver = await startReceiver({
    "/ok": async (body) => {
      const res = await file.parent.handler(
        new Request(body.task_result_callback_url.replace("https://runplane.example", "http://localhost"), {
          method: "PATCH",
          headers: { authorization: `Bearer ${body.access_token}`, "content-type": "application/vnd.api+json" },
          body: JSON.stringify(callbackBody("passed")),
        }),
      );
      // Already final after an earlier life's callback: the request was a duplicate.
      return res.status === 200 || res.status === 409 ? 200 : 500;
    },
    "/silent": () => 200,
    "/down": () => 500,
  });
  await attachTasks(file, [receiver.url("/ok"), receiver.url("/silent"), receiver.url("/down")]);
  const runs = [];
  for (let i = 0; i < 2; i++) runs.push(await file.parent.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" }));
  return runs.map(({ run, stages }) => ({ runId: run.id, stageId: stages[0]!.id }));
}

async function results(stageIds: string[]): Promise<TaskResultRecord[]> {
  return (await Promise.all(stageIds.map((id) => file.storage().taskResults.listByStage(id)))).flat();
}

describe.each(FAILPOINTS)("crash safety: SIGKILL at %s", (failpoint) => {
  it("restarts into final states only, never changing one, with at most one extra request per crash", async () => {
    const runs = await world();
    const stageIds = runs.map((r) => r.stageId);
    const start = runs.map((r) => `${r.runId}:post_plan`).join(",");
    if (failpoint !== "after-enqueue") for (const r of runs) await file.parent.runTasks.startStage(r.runId, "post_plan");
    const env = { ...file.childEnv, RUNPLANE_STAGES: stageIds.join(","), RUNPLANE_START: start, RUNPLANE_LEASE_MS: String(LEASE_MS) };

    const crashed = await spawnChild({ ...env, RUNPLANE_CLOCK: String(START + 1_000), RUNPLANE_FAILPOINT: failpoint }).exit;
    expect(crashed.signal, crashed.stderr).toBe("SIGKILL");
    const afterCrash = await results(stageIds);
    const finalAfterCrash = afterCrash.filter(isFinal);

    // The next life starts once the dead one's leases have run out.
    const resumeAt = (crashed.lastTime ?? START + 1_000) + LEASE_MS;
    const resumed = await spawnChild({ ...env, RUNPLANE_CLOCK: String(resumeAt) }).exit;
    expect(resumed.code, resumed.stderr).toBe(0);

    const end = await results(stageIds);
    expect(end).toHaveLength(6);
    expect(end.map((r) => r.status).sort()).toStrictEqual(["errored", "errored", "passed", "passed", "unreachable", "unreachable"]);
    for (const before of finalAfterCrash) expect(end.find((r) => r.id === before.id)).toStrictEqual(before);
    for (const stageId of stageIds) {
      const stage = await file.storage().taskStages.get(stageId);
      const own = end.filter((r) => r.stageId === stageId);
      expect(stage?.status).toBe(stageStatusOf(own, { overridable: false, started: true }));
    }

    let extra = 0;
    for (const result of end) {
      const sent = receiver.posts.get(result.id) ?? [];
      const [row] = await file.storage().taskDeliveries.listByResult(result.id);
      expect(row?.closedAt, result.id).not.toBeNull();
      expect(row?.leaseOwner).toBeNull();
      expect(sent.length).toBeGreaterThanOrEqual(1);
      // Every request that went out is recorded as an attempt, except one lost to the crash.
      const unrecorded = sent.length - row!.attempt;
      expect(unrecorded === 0 || unrecorded === 1, `${result.id}: ${sent.length} sent, ${row!.attempt} recorded`).toBe(true);
      extra += unrecorded;
      for (const bytes of sent) {
        expect(bytes.equals(sent[0]!)).toBe(true);
        expect(JSON.parse(bytes.toString("utf8")).task_result_id).toBe(result.id);
      }
    }
    // Attempts run concurrently, so one crash may cut several short: each of them at most once.
    if (failpoint === "after-send-before-record" || failpoint === "during-retry-scheduling") expect(extra).toBeGreaterThanOrEqual(1);
  });
});
