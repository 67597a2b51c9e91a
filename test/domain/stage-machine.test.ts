import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  isFinalResultStatus,
  isFinalStageStatus,
  rfc3339,
  stageStatusOf,
  timestampKey,
  transitionResult,
  transitionStage,
  type ResultEvent,
  type ResultTimestamps,
  type ResultView,
  type StageTimestamps,
} from "../../src/domain/stage-machine.js";
import type { CallbackStatus, EnforcementLevel, ResultStatus, StageStatus } from "../../src/schemas/run-tasks.js";

const T0 = Date.parse("2024-01-01T00:00:00Z");
const at = (seconds: number): Date => new Date(T0 + seconds * 1000);

interface Result extends ResultView {
  statusTimestamps: ResultTimestamps;
}
interface Stage {
  status: StageStatus;
  statusTimestamps: StageTimestamps;
}

const view = (status: ResultStatus, enforcementLevel: EnforcementLevel = "mandatory", overridden = false): ResultView => ({
  status,
  enforcementLevel,
  overridden,
});
const started = { overridable: false, started: true };

/** Applies an event that must be allowed and returns the new object. */
function stageAfter(stage: Stage, event: Parameters<typeof transitionStage>[1], when: Date): Stage {
  const result = transitionStage(stage, event, when);
  if (!result.ok) throw new Error(`stage ${result.from} refused ${result.event}`);
  return { status: result.status, statusTimestamps: result.statusTimestamps };
}
function resultAfter(result: Result, event: ResultEvent, when: Date): Result {
  const next = transitionResult(result, event, when);
  if (!next.ok) throw new Error(`result ${next.from} refused ${next.event}`);
  return { ...result, status: next.status, statusTimestamps: next.statusTimestamps };
}

describe("stage status from results (decision D13)", () => {
  it("is pending before the stage starts", () => {
    expect(stageStatusOf([view("pending"), view("pending")], { overridable: false, started: false })).toBe("pending");
  });

  it("is running while any result is pending or running", () => {
    expect(stageStatusOf([view("passed"), view("pending")], started)).toBe("running");
    expect(stageStatusOf([view("failed"), view("running", "advisory")], started)).toBe("running");
  });

  it("passes a stage whose two tasks both passed", () => {
    expect(stageStatusOf([view("passed"), view("passed", "advisory")], started)).toBe("passed");
  });

  it("passes a stage whose only failures are advisory", () => {
    const results = [view("passed"), view("failed", "advisory"), view("errored", "advisory"), view("unreachable", "advisory")];
    expect(stageStatusOf(results, started)).toBe("passed");
  });

  it("fails a stage with a failed mandatory result", () => {
    expect(stageStatusOf([view("passed"), view("failed")], started)).toBe("failed");
  });

  it("ranks failed over errored over unreachable among mandatory results", () => {
    expect(stageStatusOf([view("unreachable"), view("errored"), view("failed")], started)).toBe("failed");
    expect(stageStatusOf([view("unreachable"), view("errored"), view("passed")], started)).toBe("errored");
    expect(stageStatusOf([view("unreachable"), view("failed", "advisory")], started)).toBe("unreachable");
  });

  it("cancels a stage with a canceled mandatory result and ignores a canceled advisory one", () => {
    expect(stageStatusOf([view("canceled"), view("unreachable")], started)).toBe("unreachable");
    expect(stageStatusOf([view("canceled"), view("passed")], started)).toBe("canceled");
    expect(stageStatusOf([view("canceled", "advisory"), view("passed")], started)).toBe("passed");
  });

  it("awaits an override for an overridable mandatory failure, and no longer once it is overridden", () => {
    const options = { overridable: true, started: true };
    expect(stageStatusOf([view("failed"), view("passed")], options)).toBe("awaiting_override");
    expect(stageStatusOf([view("failed", "mandatory", true), view("passed")], options)).toBe("passed");
    expect(stageStatusOf([view("failed", "mandatory", true), view("failed")], options)).toBe("awaiting_override");
  });

  it("lets an errored mandatory result still block after the failures are overridden", () => {
    const options = { overridable: true, started: true };
    expect(stageStatusOf([view("failed"), view("errored")], options)).toBe("awaiting_override");
    expect(stageStatusOf([view("failed", "mandatory", true), view("errored")], options)).toBe("errored");
  });
});

describe("stage machine", () => {
  const pending: Stage = { status: "pending", statusTimestamps: {} };

  it("walks a two-task stage from pending through running to passed", () => {
    let stage = stageAfter(pending, { type: "start" }, at(1));
    let results: Result[] = [
      { status: "pending", enforcementLevel: "mandatory", statusTimestamps: {} },
      { status: "pending", enforcementLevel: "advisory", statusTimestamps: {} },
    ];
    results = results.map((r) => resultAfter(r, { type: "deliver-ok" }, at(2)));
    results[0] = resultAfter(results[0]!, { type: "callback", status: "passed" }, at(5));
    stage = stageAfter(stage, { type: "result", results, overridable: false }, at(5));
    expect(stage.status).toBe("running");
    results[1] = resultAfter(results[1]!, { type: "callback", status: "passed" }, at(9));
    stage = stageAfter(stage, { type: "result", results, overridable: false }, at(9));
    expect(stage).toEqual({
      status: "passed",
      statusTimestamps: { "running-at": "2024-01-01T00:00:01.000+00:00", "passed-at": "2024-01-01T00:00:09.000+00:00" },
    });
    expect(results[1]!.statusTimestamps).toEqual({
      "running-at": "2024-01-01T00:00:02.000+00:00",
      "passed-at": "2024-01-01T00:00:09.000+00:00",
    });
  });

  it("awaits an override, runs again on override, then passes with the failure overridden", () => {
    const running = stageAfter(pending, { type: "start" }, at(1));
    const failed = [view("failed"), view("passed")];
    const awaiting = stageAfter(running, { type: "result", results: failed, overridable: true }, at(2));
    expect(awaiting.status).toBe("awaiting_override");

    // D36: the override stamps its own time; the stage's first running-at is not stamped again.
    const overridden = stageAfter(awaiting, { type: "override" }, at(3));
    expect(overridden.status).toBe("running");
    expect(overridden.statusTimestamps).toEqual({
      "running-at": "2024-01-01T00:00:01.000+00:00",
      "awaiting-override-at": "2024-01-01T00:00:02.000+00:00",
      "overridden-at": "2024-01-01T00:00:03.000+00:00",
    });

    const after = [view("failed", "mandatory", true), view("passed")];
    const passed = stageAfter(overridden, { type: "result", results: after, overridable: true }, at(3.25));
    expect(passed.status).toBe("passed");
    expect(passed.statusTimestamps["passed-at"]).toBe("2024-01-01T00:00:03.250+00:00");
  });

  it("does not allow a second override", () => {
    const passed: Stage = { status: "passed", statusTimestamps: {} };
    expect(transitionStage(passed, { type: "override" }, at(4))).toEqual({
      ok: false,
      code: "transition-not-allowed",
      from: "passed",
      event: "override",
    });
    const running: Stage = { status: "running", statusTimestamps: {} };
    expect(transitionStage(running, { type: "override" }, at(4)).ok).toBe(false);
  });

  it("does not let a recompute leave awaiting_override without an override", () => {
    const awaiting: Stage = { status: "awaiting_override", statusTimestamps: {} };
    const results = [view("failed", "mandatory", true)];
    expect(transitionStage(awaiting, { type: "result", results, overridable: true }, at(1)).ok).toBe(false);
  });

  it("cancels a pending, running or awaiting stage, but not a finished one", () => {
    for (const status of ["pending", "running", "awaiting_override"] as const) {
      const next = transitionStage({ status, statusTimestamps: {} }, { type: "cancel" }, at(7));
      expect(next).toMatchObject({ ok: true, status: "canceled", statusTimestamps: { "canceled-at": "2024-01-01T00:00:07.000+00:00" } });
    }
    for (const status of ["passed", "failed", "errored", "canceled", "unreachable"] as const) {
      expect(transitionStage({ status, statusTimestamps: {} }, { type: "cancel" }, at(7)).ok).toBe(false);
    }
  });

  it("makes only a pending stage and a pending result unreachable when the run will not reach them (D47)", () => {
    const next = transitionStage({ status: "pending", statusTimestamps: {} }, { type: "not-reached" }, at(7));
    expect(next).toMatchObject({ ok: true, status: "unreachable", statusTimestamps: { "unreachable-at": "2024-01-01T00:00:07.000+00:00" } });
    expect(transitionResult({ status: "pending", statusTimestamps: {} }, { type: "not-reached" }, at(7))).toMatchObject({ ok: true, status: "unreachable" });
    for (const status of ["running", "awaiting_override", "passed", "failed", "errored", "canceled", "unreachable"] as const) {
      expect(transitionStage({ status, statusTimestamps: {} }, { type: "not-reached" }, at(7)).ok).toBe(false);
    }
    expect(transitionResult({ status: "running", statusTimestamps: {} }, { type: "not-reached" }, at(7)).ok).toBe(false);
  });

  it("starts only a pending stage", () => {
    expect(transitionStage({ status: "running", statusTimestamps: {} }, { type: "start" }, at(1)).ok).toBe(false);
  });

  it("reports an unchanged status without a new timestamp", () => {
    const running: Stage = { status: "running", statusTimestamps: { "running-at": "2024-01-01T00:00:01+00:00" } };
    const next = transitionStage(running, { type: "result", results: [view("running")], overridable: false }, at(9));
    expect(next).toEqual({ ok: true, status: "running", statusTimestamps: running.statusTimestamps, changed: false });
  });
});

describe("result machine", () => {
  const pending: Result = { status: "pending", enforcementLevel: "mandatory", statusTimestamps: {} };

  it("runs on a 200 and on a running callback, which may repeat", () => {
    const running = resultAfter(pending, { type: "deliver-ok" }, at(1));
    expect(running.status).toBe("running");
    const again = transitionResult(running, { type: "callback", status: "running" }, at(5));
    expect(again).toEqual({ ok: true, status: "running", statusTimestamps: running.statusTimestamps, changed: false });
    expect(transitionResult(running, { type: "deliver-ok" }, at(6))).toMatchObject({ ok: true, changed: false });
  });

  it("accepts a final callback straight from pending", () => {
    expect(resultAfter(pending, { type: "callback", status: "failed" }, at(1)).status).toBe("failed");
  });

  it("errors a delivered result and makes an undelivered one unreachable at the deadline (decision D16)", () => {
    const running = resultAfter(pending, { type: "deliver-ok" }, at(1));
    expect(resultAfter(running, { type: "deadline" }, at(600)).status).toBe("errored");
    expect(resultAfter(pending, { type: "deadline" }, at(600)).status).toBe("unreachable");
  });

  it("never changes a final result", () => {
    const events: ResultEvent[] = [
      { type: "deliver-ok" },
      { type: "callback", status: "running" },
      { type: "callback", status: "passed" },
      { type: "callback", status: "failed" },
      { type: "deadline" },
      { type: "cancel" },
      { type: "not-reached" },
    ];
    for (const status of ["passed", "failed", "errored", "canceled", "unreachable"] as const) {
      for (const event of events) {
        expect(transitionResult({ status, statusTimestamps: {} }, event, at(1))).toEqual({
          ok: false,
          code: "transition-not-allowed",
          from: status,
          event: event.type,
        });
      }
    }
  });
});

describe("status timestamps", () => {
  it("are RFC 3339 with an offset and milliseconds (D36)", () => {
    expect(rfc3339(new Date("2024-06-08T12:31:56.948Z"))).toBe("2024-06-08T12:31:56.948+00:00");
    expect(rfc3339(new Date("2024-06-08T12:31:56Z"))).toBe("2024-06-08T12:31:56.000+00:00");
  });

  it("keep the milliseconds of two changes in one second, in order", () => {
    const running = stageAfter({ status: "pending", statusTimestamps: {} }, { type: "start" }, at(1.1));
    const failed = stageAfter(running, { type: "result", results: [view("failed")], overridable: false }, at(1.9));
    expect(failed.statusTimestamps).toEqual({ "running-at": "2024-01-01T00:00:01.100+00:00", "failed-at": "2024-01-01T00:00:01.900+00:00" });
  });

  it("use hyphenated <status>-at keys", () => {
    expect(timestampKey("awaiting_override")).toBe("awaiting-override-at");
    expect(timestampKey("running")).toBe("running-at");
  });

  it("never go back in time when a later event carries an earlier clock, reading stored whole-second values", () => {
    const running: Stage = { status: "running", statusTimestamps: { "running-at": "2024-01-01T00:01:00+00:00" } };
    const next = transitionStage(running, { type: "cancel" }, at(10));
    expect(next).toMatchObject({ ok: true, statusTimestamps: { "running-at": "2024-01-01T00:01:00+00:00", "canceled-at": "2024-01-01T00:01:00.000+00:00" } });
  });
});

// ---- property: random event sequences over a stage of 1-4 results ----

type Op =
  | { kind: "start" }
  | { kind: "deliver"; index: number }
  | { kind: "callback"; index: number; status: CallbackStatus }
  | { kind: "deadline"; index: number }
  | { kind: "cancel-run" }
  | { kind: "override" };

// Weighted so that most runs reach final and awaiting states; a run cancel is placed separately.
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Op>({ kind: "start" }) },
  { weight: 3, arbitrary: fc.nat(3).map<Op>((index) => ({ kind: "deliver", index })) },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.nat(3), fc.constantFrom<CallbackStatus>("running", "passed", "failed"))
      .map<Op>(([index, status]) => ({ kind: "callback", index, status })),
  },
  { weight: 1, arbitrary: fc.nat(3).map<Op>((index) => ({ kind: "deadline", index })) },
  { weight: 2, arbitrary: fc.constant<Op>({ kind: "override" }) },
);

const scenarioArb = fc
  .record({
    levels: fc.array(fc.constantFrom<EnforcementLevel>("advisory", "mandatory"), { minLength: 1, maxLength: 4 }),
    overridable: fc.boolean(),
    // Clock steps may be negative: two workers' clocks disagree.
    steps: fc.array(fc.tuple(opArb, fc.integer({ min: -120_000, max: 300_000 })), { maxLength: 40, size: "medium" }),
    cancelAt: fc.option(fc.nat(40), { nil: undefined }),
    // Mostly start at once, so that sequences spend their steps on results.
    startFirst: fc.nat(3).map((n) => n > 0),
  })
  .map(({ steps, cancelAt, startFirst, ...rest }) => {
    const cancel: [Op, number][] = [[{ kind: "cancel-run" }, 1000]];
    const withCancel = cancelAt === undefined ? steps : [...steps.slice(0, cancelAt), ...cancel, ...steps.slice(cancelAt)];
    return { ...rest, steps: startFirst ? [[{ kind: "start" }, 0] as [Op, number], ...withCancel] : withCancel };
  });

/** Tracks, per object, the latest timestamp written, and checks every new one is not earlier. */
function checkMonotonic(before: Record<string, string | undefined>, after: Record<string, string | undefined>): void {
  const latest = Math.max(0, ...Object.values(before).map((v) => Date.parse(v ?? "")).filter(Number.isFinite));
  for (const [key, value] of Object.entries(after)) {
    if (before[key] === value) continue;
    expect(value).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    expect(Date.parse(value ?? "")).toBeGreaterThanOrEqual(latest);
  }
}

describe("stage machine property", () => {
  it("keeps final results final, timestamps monotonic and the stage equal to D13 of its results", () => {
    fc.assert(
      fc.property(scenarioArb, ({ levels, overridable, steps }) => {
        let now = T0;
        let stage: Stage = { status: "pending", statusTimestamps: {} };
        let results: Result[] = levels.map((enforcementLevel) => ({ status: "pending", enforcementLevel, statusTimestamps: {} }));

        const moveStage = (event: Parameters<typeof transitionStage>[1], when: Date): boolean => {
          const next = transitionStage(stage, event, when);
          if (!next.ok) return false;
          checkMonotonic(stage.statusTimestamps, next.statusTimestamps);
          stage = { status: next.status, statusTimestamps: next.statusTimestamps };
          return true;
        };
        const moveResult = (index: number, event: ResultEvent, when: Date): boolean => {
          const before = results[index]!;
          const next = transitionResult(before, event, when);
          if (isFinalResultStatus(before.status)) expect(next.ok).toBe(false);
          if (!next.ok) return false;
          checkMonotonic(before.statusTimestamps, next.statusTimestamps);
          results = results.map((r, i) => (i === index ? { ...r, status: next.status, statusTimestamps: next.statusTimestamps } : r));
          return true;
        };

        for (const [op, delta] of steps) {
          now += delta;
          const when = new Date(now);
          const finalBefore = results.map((r) =>
            isFinalResultStatus(r.status) ? { status: r.status, statusTimestamps: r.statusTimestamps } : null,
          );

          switch (op.kind) {
            case "start": {
              const wasPending = stage.status === "pending";
              expect(moveStage({ type: "start" }, when)).toBe(wasPending);
              break;
            }
            case "deliver":
            case "callback":
            case "deadline": {
              const index = op.index % results.length;
              const event: ResultEvent =
                op.kind === "deliver"
                  ? { type: "deliver-ok" }
                  : op.kind === "callback"
                    ? { type: "callback", status: op.status }
                    : { type: "deadline" };
              // Requests go out only once the stage has started.
              if (stage.status === "pending") break;
              const wasFinal = isFinalResultStatus(results[index]!.status);
              expect(moveResult(index, event, when)).toBe(!wasFinal);
              if (!wasFinal) expect(moveStage({ type: "result", results, overridable }, when)).toBe(true);
              break;
            }
            case "cancel-run": {
              const wasFinal = isFinalStageStatus(stage.status);
              expect(moveStage({ type: "cancel" }, when)).toBe(!wasFinal);
              if (!wasFinal) {
                results.forEach((r, i) => {
                  if (!isFinalResultStatus(r.status)) expect(moveResult(i, { type: "cancel" }, when)).toBe(true);
                });
              }
              break;
            }
            case "override": {
              const allowed = stage.status === "awaiting_override";
              expect(moveStage({ type: "override" }, when)).toBe(allowed);
              if (allowed) {
                expect(stage.status).toBe("running");
                results = results.map((r) =>
                  r.status === "failed" && r.enforcementLevel === "mandatory" ? { ...r, overridden: true } : r,
                );
                expect(moveStage({ type: "result", results, overridable }, when)).toBe(true);
              }
              break;
            }
          }

          finalBefore.forEach((snapshot, i) => {
            if (snapshot === null) return;
            expect({ status: results[i]!.status, statusTimestamps: results[i]!.statusTimestamps }).toEqual(snapshot);
          });
          if (stage.status === "canceled") {
            expect(results.every((r) => isFinalResultStatus(r.status))).toBe(true);
          } else {
            expect(stage.status).toBe(stageStatusOf(results, { overridable, started: stage.status !== "pending" }));
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
