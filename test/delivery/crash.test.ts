import { afterEach, describe, expect, it } from "vitest";
import { CRASH_FAILPOINTS, crashIntegrations, expectRecovered, isFinal, resultsOf } from "./crash-checks.js";
import { attachTasks, sharedFile, spawnChild, startReceiver, type Receiver, type SharedFile } from "./processes.js";
import { START } from "./support.js";

// Crash safety of the outbox (decision D15): a dispatcher process over a SQLite file is killed
// with SIGKILL at a named failpoint and restarted. Every result still reaches a final state, no
// final state ever changes, and a crash costs each request at most one extra send, always for the
// same task_result_id with the same bytes (crash-checks.ts). Two runs of three integrations, so
// six results.

const LEASE_MS = 30_000;

let file: SharedFile;
let receiver: Receiver;
afterEach(async () => {
  await receiver?.close();
  await file?.dispose();
});

async function world() {
  file = await sharedFile();
  receiver = await startReceiver(crashIntegrations(() => file.parent));
  await attachTasks(file, [receiver.url("/ok"), receiver.url("/silent"), receiver.url("/down")]);
  const runs = [];
  for (let i = 0; i < 2; i++) runs.push(await file.parent.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" }));
  return runs.map(({ run, stages }) => ({ runId: run.id, stageId: stages[0]!.id }));
}

describe.each(CRASH_FAILPOINTS)("crash safety: SIGKILL at %s", (failpoint) => {
  it("restarts into final states only, never changing one, with at most one extra request per crash", async () => {
    const runs = await world();
    const stageIds = runs.map((r) => r.stageId);
    const start = runs.map((r) => `${r.runId}:post_plan`).join(",");
    if (failpoint !== "after-enqueue") for (const r of runs) await file.parent.runTasks.startStage(r.runId, "post_plan");
    const env = { ...file.childEnv, RUNPLANE_STAGES: stageIds.join(","), RUNPLANE_START: start, RUNPLANE_LEASE_MS: String(LEASE_MS) };

    const crashed = await spawnChild({ ...env, RUNPLANE_CLOCK: String(START + 1_000), RUNPLANE_FAILPOINT: failpoint }).exit;
    expect(crashed.signal, crashed.stderr).toBe("SIGKILL");
    const finalAfterCrash = (await resultsOf(file.storage(), stageIds)).filter(isFinal);

    // The next life starts once the dead one's leases have run out.
    const resumeAt = (crashed.lastTime ?? START + 1_000) + LEASE_MS;
    const resumed = await spawnChild({ ...env, RUNPLANE_CLOCK: String(resumeAt) }).exit;
    expect(resumed.code, resumed.stderr).toBe(0);

    await expectRecovered(file.storage(), receiver, stageIds, finalAfterCrash, failpoint);
  });
});
