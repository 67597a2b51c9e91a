import { describe, expect, it } from "vitest";
import type { TaskResultRecord } from "../../schemas/run-task-records.js";
import { race, type ConformanceContext } from "./context.js";
import { outcome, rid, run } from "./run-task-fixtures.js";
import { OPEN, type TaskStageHelpers } from "./task-stage-support.js";

const running = (r: TaskResultRecord, version: number): TaskResultRecord => ({
  ...r,
  status: "running",
  statusTimestamps: { "running-at": "2024-05-01T10:00:03.000+00:00" },
  message: "working",
  version,
});

/** The guarded transition: the result and its outcomes written together, one winner among racing callbacks. */
function transitionCases(h: TaskStageHelpers): void {
  const { s, st, r1 } = h;

  it("replaces the result and adds outcomes together, only while status and version match", async () => {
    await s().runs.create(run(), [st], [r1]);
    const next = { ...running(r1, 2), outcomesCount: 1 };
    const o = outcome();
    expect(await s().taskResults.transition(r1.id, { statuses: ["running"], version: 1 }, next, [o])).toBeNull();
    expect(await s().taskResults.transition(r1.id, { statuses: OPEN, version: 4 }, next, [o])).toBeNull();
    expect(await s().taskResultOutcomes.get(o.id)).toBeNull();
    expect(await s().taskResults.transition(r1.id, { statuses: OPEN, version: 1 }, next, [o])).toStrictEqual(next);
    expect(await s().taskResults.get(r1.id)).toStrictEqual(next);
    expect(await s().taskResultOutcomes.get(o.id)).toStrictEqual(o);
    const bare = outcome({ id: rid("tro", 2), body: null, url: null, tags: {}, severityLabel: null, severityRank: 0, position: 1 });
    expect(await s().taskResults.transition(r1.id, { statuses: OPEN, version: 2 }, { ...next, version: 3 }, [bare])).not.toBeNull();
    expect(await s().taskResultOutcomes.get(bare.id)).toStrictEqual(bare);
  });

  it("lets exactly one of 10 racing final callbacks win, and only its outcomes are stored", async () => {
    await s().runs.create(run(), [st], [r1]);
    const outcomes = await race(10, (i) =>
      s().taskResults.transition(
        r1.id,
        { statuses: OPEN, version: 1 },
        { ...r1, status: i % 2 ? "passed" : "failed", message: `m${i}`, version: 2, outcomesCount: 1 },
        [outcome({ id: rid("tro", 100 + i) })],
      ),
    );
    const winners = outcomes.filter((o) => o !== null);
    expect(winners).toHaveLength(1);
    expect(await s().taskResults.get(r1.id)).toStrictEqual(winners[0]);
    const stored = await s().taskResultOutcomes.list(r1.id, { sort: "position" }, { offset: 0, limit: 100 });
    expect(stored.total).toBe(1);
    expect(stored.items[0]!.id).toBe(rid("tro", 100 + outcomes.findIndex((o) => o !== null)));
  });
}

/** Reading outcomes back: filtered, sorted and paged, and their body bytes summed per result. */
function outcomeQueryCases(h: TaskStageHelpers): void {
  const { s, st, r1, r2 } = h;

  it("filters outcomes by exact labels, sorts by position or by severity rank, and pages", async () => {
    await s().runs.create(run(), [st], [r1, r2]);
    const rows = [
      outcome({ id: rid("tro", 5), position: 0, severityLabel: "low", severityRank: 1, statusLabel: "passed" }),
      outcome({ id: rid("tro", 4), position: 1, severityLabel: "high", severityRank: 3, statusLabel: "failed" }),
      outcome({ id: rid("tro", 3), position: 2, severityLabel: null, severityRank: 0, statusLabel: null }),
      outcome({ id: rid("tro", 2), position: 3, severityLabel: "high", severityRank: 3, statusLabel: "passed" }),
      outcome({ id: rid("tro", 1), position: 4, severityLabel: "medium", severityRank: 2, statusLabel: "Passed" }),
    ];
    await s().taskResults.transition(r1.id, { statuses: OPEN, version: 1 }, { ...running(r1, 2), outcomesCount: 5 }, rows);
    await s().taskResults.transition(r2.id, { statuses: OPEN, version: 1 }, running(r2, 2), [outcome({ id: rid("tro", 9), taskResultId: r2.id })]);
    const list = (query: Parameters<ReturnType<typeof s>["taskResultOutcomes"]["list"]>[1], offset = 0, limit = 100) =>
      s().taskResultOutcomes.list(r1.id, query, { offset, limit });
    expect(await list({ sort: "position" })).toStrictEqual({ items: rows, total: 5 });
    expect((await list({ sort: "severity" })).items.map((o) => o.position)).toStrictEqual([1, 3, 4, 0, 2]);
    expect(await list({ sort: "position" }, 1, 2)).toStrictEqual({ items: rows.slice(1, 3), total: 5 });
    expect(await list({ sort: "position", severity: "high" })).toStrictEqual({ items: [rows[1], rows[3]], total: 2 });
    expect(await list({ sort: "position", status: "passed" })).toStrictEqual({ items: [rows[0], rows[3]], total: 2 });
    expect(await list({ sort: "severity", status: "passed", severity: "high" })).toStrictEqual({ items: [rows[3]], total: 1 });
    expect(await list({ sort: "position", severity: "none-such" })).toStrictEqual({ items: [], total: 0 });
  });

  it("sums the UTF-8 bytes of a result's outcome bodies, per result (D26)", async () => {
    await s().runs.create(run(), [st], [r1, r2]);
    expect(await s().taskResultOutcomes.bodyBytes(r1.id)).toBe(0);
    const rows = [
      outcome({ id: rid("tro", 1), position: 0, body: "abc" }),
      outcome({ id: rid("tro", 2), position: 1, body: null }),
      outcome({ id: rid("tro", 3), position: 2, body: "€ü" }), // 3 + 2 bytes, 2 characters
      outcome({ id: rid("tro", 4), position: 3, body: "" }),
    ];
    await s().taskResults.transition(r1.id, { statuses: OPEN, version: 1 }, { ...running(r1, 2), outcomesCount: 4 }, rows);
    await s().taskResults.transition(r2.id, { statuses: OPEN, version: 1 }, running(r2, 2), [
      outcome({ id: rid("tro", 9), taskResultId: r2.id, body: "x".repeat(1000) }),
    ]);
    expect(await s().taskResultOutcomes.bodyBytes(r1.id)).toBe(8);
    expect(await s().taskResultOutcomes.bodyBytes(r2.id)).toBe(1000);
    expect(await s().taskResultOutcomes.bodyBytes(rid("taskrs", 99))).toBe(0);
  });
}

/** Task results: guarded transitions and the outcomes they add. */
export function describeTaskResultTransitionCases(ctx: ConformanceContext, h: TaskStageHelpers): void {
  describe("task results: transition and outcomes", () => {
    transitionCases(h);
    outcomeQueryCases(h);
  });
}
