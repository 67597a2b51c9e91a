import { describe, expect, it } from "vitest";
import { CRASH_FAILPOINTS, crashIntegrations, expectRecovered, isFinal, resultsOf } from "../delivery/crash-checks.js";
import type { Receiver } from "../delivery/processes.js";
import { START } from "../delivery/support.js";
import { postgresReachable } from "../helpers/postgres.js";
import { attachTasks, useCluster, type HostProcess, type Parent } from "./cluster.js";

// Crash safety across hosts on PostgreSQL (decisions D15, D27): the SQLite crash tests'
// scenario (test/delivery/crash-checks.ts) with the dispatcher in a host process on a shared
// schema, killed with SIGKILL at each failpoint while it holds leases, then a second host taking
// over once the leases ran out. And fencing: a host paused with SIGSTOP past its lease cannot
// write once it resumes. Hosts run on virtual clocks (fixtures/tick-host.ts).

const reachable = await postgresReachable("multihost crash");
const LEASE_MS = 30_000;

describe.skipIf(!reachable)("several hosts on one database: crashes and pauses", () => {
  const cluster = useCluster("crash");
  let parent: Parent;
  let receiver: Receiver;
  const host = (name: string, env: Record<string, string>): HostProcess =>
    cluster.spawn("tick-host", name, { RUNPLANE_OWNER: name, RUNPLANE_LEASE_MS: String(LEASE_MS), ...env });

  /** Two runs of three tasks (one per path), created (not started) through the parent. */
  async function world(paths = ["/ok", "/silent", "/down"], behaviours = crashIntegrations(() => parent.runplane)) {
    parent = await cluster.open(() => new Date(START));
    receiver = await cluster.receive(behaviours);
    await attachTasks(parent.runplane, paths.map((p) => receiver.url(p)));
    const runs = [];
    for (let i = 0; i < 2; i++) runs.push(await parent.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1" }));
    return runs.map(({ run, stages }) => ({ runId: run.id, stageId: stages[0]!.id }));
  }

  describe.each(CRASH_FAILPOINTS)("SIGKILL of a host at %s", (failpoint) => {
    it("another host finishes: every result ends in exactly one final state, none changes, nothing is lost", async () => {
      const runs = await world();
      const stageIds = runs.map((r) => r.stageId);
      if (failpoint !== "after-enqueue") for (const r of runs) await parent.runplane.runTasks.startStage(r.runId, "post_plan");
      const env = { RUNPLANE_STAGES: stageIds.join(","), RUNPLANE_START: runs.map((r) => r.runId).join(",") };

      const crashed = await host("a", { ...env, RUNPLANE_CLOCK: String(START + 1_000), RUNPLANE_FAILPOINT: failpoint }).exit;
      expect(crashed.signal, crashed.stderr).toBe("SIGKILL");
      const finalAfterCrash = (await resultsOf(parent.storage, stageIds)).filter(isFinal);

      const resumed = await host("b", { ...env, RUNPLANE_CLOCK: String((crashed.lastTime ?? START + 1_000) + LEASE_MS) }).exit;
      expect(resumed.code, resumed.stderr).toBe(0);
      await expectRecovered(parent.storage, receiver, stageIds, finalAfterCrash, failpoint);
    }, 30_000);
  });

  it("a host paused with SIGSTOP past its lease cannot write once it resumes: its fencing token is stale", async () => {
    // The first request is answered 200 (host A's, which A then cannot record), the second 503
    // (host B's): B's retry leaves the row open under a newer token, so only the token stands
    // between A and the row.
    const answered = new Map<string, number>();
    const runs = await world(["/flaky"], {
      "/flaky": (body) => {
        const n = (answered.get(body.task_result_id) ?? 0) + 1;
        answered.set(body.task_result_id, n);
        return n === 1 ? 200 : 503;
      },
    });
    // One result, so host A holds exactly one lease when it is paused.
    await parent.runplane.runTasks.startStage(runs[0]!.runId, "post_plan");
    const stageIds = [runs[0]!.stageId];

    const a = host("a", { RUNPLANE_CLOCK: String(START + 1_000), RUNPLANE_PAUSE_AT: "after-send-before-record", RUNPLANE_TICKS: "1" });
    await a.line(/^at after-send-before-record$/);
    a.child.kill("SIGSTOP");
    const [held] = await resultsOf(parent.storage, stageIds);
    expect((await parent.storage.taskDeliveries.listByResult(held!.id))[0]).toMatchObject({ leaseOwner: "a", fencingToken: 1 });
    expect(receiver.posts.get(held!.id)).toHaveLength(1);

    const b = await host("b", { RUNPLANE_CLOCK: String(START + 1_000 + LEASE_MS), RUNPLANE_TICKS: "1" }).exit;
    expect(b.code, b.stderr).toBe(0);
    a.child.kill("SIGCONT");
    a.send("go");
    const resumed = await a.exit;
    expect(resumed.code, resumed.stderr).toBe(0);

    const end = await resultsOf(parent.storage, stageIds);
    expect(end).toHaveLength(1);
    for (const r of end) {
      // B's retry stands: open, one attempt, due again later, token 2; A's 200 changed nothing.
      expect((await parent.storage.taskDeliveries.listByResult(r.id))[0]).toMatchObject({
        closedAt: null,
        deliveredAt: null,
        attempt: 1,
        lastError: expect.stringContaining("503"),
        fencingToken: 2,
        leaseOwner: null,
      });
      expect(r.status).toBe("pending");
      expect(receiver.posts.get(r.id)).toHaveLength(2);
    }
  }, 30_000);
});
