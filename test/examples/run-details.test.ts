import { describe, expect, it } from "vitest";
import { demoPolicyChecks, demoRunDetails } from "../../examples/server/run-details.js";
import type { ArtifactRun, RunDetails, TaskStageView } from "../../src/index.js";

// The demo's run details follow what runplane recorded for the run (its creation, its task
// stages), as HCP Terraform words a run's states; nothing is made up or dated in the future.

const CREATED = "2026-01-01T10:00:00.000Z";
const run: ArtifactRun = {
  id: "run-1",
  organization: "demo",
  workspaceId: "ws-demo",
  message: "hello",
  createdBy: "user-demo",
  createdAt: CREATED,
  isSpeculative: false,
  configurationVersionId: "cv-demo",
  configurationVersionDownloadable: true,
  applyId: "apply-1",
  planId: "plan-1",
  vcs: null,
};

const stage = (name: TaskStageView["stage"], status: TaskStageView["status"], statusTimestamps: Record<string, string> = {}): TaskStageView => ({
  id: `ts-${name}`,
  runId: run.id,
  workspaceId: run.workspaceId,
  organization: run.organization,
  stage: name,
  status,
  statusTimestamps,
  overridden: false,
  overrideComment: null,
  createdAt: CREATED,
  updatedAt: CREATED,
});

const at = (ms: number) => new Date(Date.parse(CREATED) + ms).toISOString();
const times = (details: RunDetails | null) => Object.values({ ...details?.statusTimestamps, ...details?.plan?.statusTimestamps }).map((t) => Date.parse(String(t)));

describe("the reference server's demo run details", () => {
  it("plans between the run's creation and its post_plan stage, then checks policies once post_plan passed", () => {
    const stages = [
      stage("post_plan", "passed", { "running-at": at(5), "passed-at": at(900) }),
      stage("pre_apply", "passed", { "running-at": at(910), "passed-at": at(1500) }),
    ];
    const details = demoRunDetails(run, stages);
    expect(details).toMatchObject({
      status: "applied",
      plan: { status: "finished", statusTimestamps: { "queued-at": CREATED, "started-at": CREATED, "finished-at": at(5) } },
      statusTimestamps: { "plan-queued-at": CREATED, "planned-at": at(5), "post-plan-completed-at": at(900), "pre-apply-completed-at": at(1500) },
    });
    // Nothing after the last thing runplane recorded.
    expect(Math.max(...times(details))).toBeLessThanOrEqual(Date.parse(at(1500)));
    const [check] = demoPolicyChecks(run, stages);
    expect(check).toMatchObject({ status: "passed" });
    for (const t of Object.values(check!.statusTimestamps ?? {})) {
      expect(Date.parse(String(t))).toBeGreaterThanOrEqual(Date.parse(at(900)));
      expect(Date.parse(String(t))).toBeLessThanOrEqual(Date.parse(at(910)));
    }
  });

  it("errors the run, with no policy check, when its mandatory post_plan stage failed", () => {
    // decision D47: runplane makes the stages after a failed one unreachable; the apply never runs.
    const stages = [stage("post_plan", "failed", { "running-at": at(5), "failed-at": at(700) }), stage("pre_apply", "unreachable", { "unreachable-at": at(700) })];
    const details = demoRunDetails(run, stages);
    expect(details).toMatchObject({ status: "errored", plan: { status: "finished" }, statusTimestamps: { "errored-at": at(700) } });
    expect(details?.apply).toStrictEqual({ status: "unreachable" });
    expect(demoPolicyChecks(run, stages)).toEqual([]);
  });

  it("says post_plan_running while the stage runs, post_plan_awaiting_decision when it waits for an override", () => {
    expect(demoRunDetails(run, [stage("post_plan", "running", { "running-at": at(5) })])?.status).toBe("post_plan_running");
    const waiting = [stage("post_plan", "awaiting_override", { "running-at": at(5), "awaiting-override-at": at(50) })];
    expect(demoRunDetails(run, waiting)?.status).toBe("post_plan_awaiting_decision");
    expect(demoPolicyChecks(run, waiting)).toEqual([]);
  });

  it("applies once pre_apply passed (nothing real: the demo plan's counts), then runs post_apply (D47)", () => {
    const checked = [
      stage("post_plan", "passed", { "running-at": at(5), "passed-at": at(900) }),
      stage("pre_apply", "passed", { "running-at": at(910), "passed-at": at(1500) }),
    ];
    const applied = demoRunDetails(run, checked);
    expect(applied).toMatchObject({
      status: "applied",
      statusTimestamps: { "applying-at": at(1500), "applied-at": at(1500) },
      apply: { status: "finished", statusTimestamps: { "queued-at": at(1500), "started-at": at(1500), "finished-at": at(1500) } },
    });
    expect(Math.max(...times(applied))).toBeLessThanOrEqual(Date.parse(at(1500)));
    const running = demoRunDetails(run, [...checked, stage("post_apply", "running", { "running-at": at(1600) })]);
    expect(running).toMatchObject({ status: "post_apply_running", apply: { status: "finished" } });
    const done = demoRunDetails(run, [...checked, stage("post_apply", "passed", { "running-at": at(1600), "passed-at": at(1700) })]);
    expect(done).toMatchObject({ status: "applied", statusTimestamps: { "post-apply-completed-at": at(1700) } });
  });

  it("waits for pre_apply before applying: the apply is pending until then", () => {
    const stages = [stage("post_plan", "passed", { "running-at": at(5), "passed-at": at(900) }), stage("pre_apply", "running", { "running-at": at(910) })];
    expect(demoRunDetails(run, stages)).toMatchObject({ status: "pre_apply_running", apply: { status: "pending" } });
  });

  it("is still planning while its post_plan stage has not started", () => {
    const details = demoRunDetails(run, [stage("post_plan", "pending")]);
    expect(details).toMatchObject({ status: "planning", plan: { status: "running" } });
    expect(details?.plan?.statusTimestamps).not.toHaveProperty("finished-at");
    expect(Math.max(...times(details))).toBeLessThanOrEqual(Date.parse(CREATED));
  });
});
