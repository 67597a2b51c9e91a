import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { commentEventId, runEventId, runEventsOf, runIdOfEvent, type RunEventStage } from "../../src/domain/run-events.js";
import type { CommentRecord } from "../../src/schemas/run-comments.js";
import type { RunRecord } from "../../src/schemas/run-task-records.js";

/** Decision D36: event ids that name their run, events in time order to the millisecond. */

const run = { id: "run-abc", createdAt: "2026-01-01T12:00:00.000Z" } as RunRecord;
const stage = (over: Partial<RunEventStage> = {}): RunEventStage => ({
  id: "ts-1",
  stage: "post_plan",
  statusTimestamps: {},
  overridden: false,
  overrideComment: null,
  results: [],
  ...over,
});
const result = (id: string, statusTimestamps: Record<string, string>) => ({ id, taskName: id, message: null, statusTimestamps });
const comment = (id: string, createdAt: string) => ({ id, runId: run.id, body: "b", authorId: "user-1", createdAt }) as CommentRecord;
const actions = (stages: RunEventStage[], comments: CommentRecord[] = []) => runEventsOf(run, stages, comments).map((e) => e.action);

describe("run event ids (D36)", () => {
  it("name their run, are stable, and keep to go-tfe's id characters for any run id", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, unit: "grapheme" }), fc.string(), (runId, key) => {
        const id = runEventId(runId, key);
        expect(id).toMatch(/^re-[A-Za-z0-9._-]+$/);
        expect(runEventId(runId, key)).toBe(id);
        expect(runIdOfEvent(id)).toBe(runId);
      }),
    );
  });

  it("differ between events of one run and between runs", () => {
    expect(runEventId("run-a", "created")).not.toBe(runEventId("run-a", "comment c"));
    expect(runEventId("run-a", "created")).not.toBe(runEventId("run-b", "created"));
    expect(commentEventId("run-a", "wsc-1")).toBe(runEventId("run-a", "comment wsc-1"));
  });

  it("name no run when they are not runplane's: old digest-only ids, other spellings, garbage", () => {
    const id = runEventId("run-a", "created");
    for (const bad of ["re-0123456789ABCDEF", "", "re-", `${id}x`, id.replace("re-", "rx-"), "re-cnVuLWE=.0123456789ABCDEF", "re-cnVuLWF.0123456789ABCDEF", "re-.0123456789ABCDEF", "re-_w.0123456789ABCDEF"]) {
      expect(runIdOfEvent(bad), bad).toBeNull();
    }
  });
});

describe("run events in time order (D36)", () => {
  it("lists events of one second in millisecond order, not grouped by kind", () => {
    const s = stage({
      statusTimestamps: { "running-at": "2026-01-01T12:00:00.100+00:00", "passed-at": "2026-01-01T12:00:00.900+00:00" },
      results: [result("r1", { "running-at": "2026-01-01T12:00:00.200+00:00", "passed-at": "2026-01-01T12:00:00.800+00:00" })],
    });
    const events = runEventsOf(run, [s], [comment("wsc-1", "2026-01-01T12:00:00.500Z")]);
    expect(events.map((e) => e.action)).toEqual(["created", "task_stage_running", "task_result_running", "commented", "task_result_passed", "task_stage_passed"]);
    expect(events.map((e) => e.createdAt)).toEqual([
      "2026-01-01T12:00:00.000Z",
      "2026-01-01T12:00:00.100Z",
      "2026-01-01T12:00:00.200Z",
      "2026-01-01T12:00:00.500Z",
      "2026-01-01T12:00:00.800Z",
      "2026-01-01T12:00:00.900Z",
    ]);
  });

  it("lists awaiting_override, then the override at its own time, then running is not listed again", () => {
    const s = stage({
      statusTimestamps: {
        "running-at": "2026-01-01T12:00:01.000+00:00",
        "awaiting-override-at": "2026-01-01T12:00:02.000+00:00",
        "overridden-at": "2026-01-01T12:00:05.000+00:00",
        "passed-at": "2026-01-01T12:00:05.001+00:00",
      },
      overridden: true,
      overrideComment: "accepted",
      results: [result("r1", { "running-at": "2026-01-01T12:00:01.500+00:00", "failed-at": "2026-01-01T12:00:01.900+00:00" })],
    });
    const events = runEventsOf(run, [s], []);
    expect(events.map((e) => e.action)).toEqual(["created", "task_stage_running", "task_result_running", "task_result_failed", "task_stage_awaiting_override", "overridden", "task_stage_passed"]);
    expect(events.find((e) => e.action === "overridden")).toMatchObject({ createdAt: "2026-01-01T12:00:05.000Z", description: "The post_plan task stage was overridden: accepted" });
  });

  it("breaks ties deterministically: the run, then stage by stage in run order, each in lifecycle order, comments last", () => {
    const t = "2026-01-01T12:00:00+00:00";
    const pre = stage({ id: "ts-pre", stage: "pre_plan", statusTimestamps: { "passed-at": t, "running-at": t }, results: [result("r1", { "passed-at": t, "running-at": t }), result("r2", { "running-at": t })] });
    const post = stage({ id: "ts-post", statusTimestamps: { "running-at": t } });
    const expected = ["created", "task_stage_running", "task_result_running", "task_result_running", "task_result_passed", "task_stage_passed", "task_stage_running", "commented"];
    expect(actions([pre, post], [comment("wsc-1", "2026-01-01T12:00:00Z")])).toEqual(expected);
    // The same answer whatever order the stored maps list their keys in.
    const reversed = { ...pre, statusTimestamps: { "running-at": t, "passed-at": t }, results: [result("r1", { "running-at": t, "passed-at": t }), pre.results[1]!] };
    expect(actions([reversed, post], [comment("wsc-1", "2026-01-01T12:00:00Z")])).toEqual(expected);
    const ids = runEventsOf(run, [pre, post], []).map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("reads stored whole-second values and a stage overridden before D36 (the override re-stamped running-at)", () => {
    const s = stage({
      statusTimestamps: { "running-at": "2026-01-01T12:00:03+00:00", "awaiting-override-at": "2026-01-01T12:00:02+00:00", "passed-at": "2026-01-01T12:00:03+00:00" },
      overridden: true,
    });
    const events = runEventsOf(run, [s], [comment("wsc-1", "2026-01-01T12:00:02.500Z")]);
    expect(events.map((e) => [e.action, e.createdAt])).toEqual([
      ["created", "2026-01-01T12:00:00.000Z"],
      ["task_stage_awaiting_override", "2026-01-01T12:00:02.000Z"],
      ["commented", "2026-01-01T12:00:02.500Z"],
      ["task_stage_running", "2026-01-01T12:00:03.000Z"],
      ["overridden", "2026-01-01T12:00:03.000Z"],
      ["task_stage_passed", "2026-01-01T12:00:03.000Z"],
    ]);
  });
});

describe("run event descriptions", () => {
  it("say final statuses in the past tense and the others as what is going on", () => {
    const at = "2026-01-01T12:00:01.000+00:00";
    // A result is never awaiting an override: only its stage is.
    const described = (status: string) =>
      runEventsOf(run, [stage({ statusTimestamps: { [`${status.replaceAll("_", "-")}-at`]: at }, results: status === "awaiting_override" ? [] : [result("scan", { [`${status.replaceAll("_", "-")}-at`]: at })] })], [])
        .filter((e) => e.action !== "created")
        .map((e) => e.description);
    expect(described("passed")).toEqual(["Run task scan passed.", "The post_plan task stage passed."]);
    expect(described("failed")).toEqual(["Run task scan failed.", "The post_plan task stage failed."]);
    expect(described("errored")).toEqual(["Run task scan errored.", "The post_plan task stage errored."]);
    expect(described("canceled")).toEqual(["Run task scan was canceled.", "The post_plan task stage was canceled."]);
    expect(described("unreachable")).toEqual(["Run task scan was unreachable.", "The post_plan task stage was unreachable."]);
    expect(described("running")).toEqual(["The post_plan task stage is running.", "Run task scan is running."]);
    expect(described("pending")).toEqual(["The post_plan task stage is pending.", "Run task scan is pending."]);
    expect(described("awaiting_override")).toEqual(["The post_plan task stage is awaiting override."]);
  });
});
