import { describe, expect, it } from "vitest";
import type { RunRecord, TaskStageRecord } from "../../schemas/run-task-records.js";
import { race, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";
import { outcome, result, rid, run, stage, started } from "./run-task-fixtures.js";
import { describeTaskDeliveryCases } from "./task-deliveries.cases.js";
import { describeTaskResultTransitionCases } from "./task-result-transition.cases.js";
import { OPEN, PENDING, taskStageHelpers, type TaskStageHelpers } from "./task-stage-support.js";

function taskStageCases1(ctx: ConformanceContext, h: TaskStageHelpers): void {
  const { s, st, pre, r1, r2 } = h;

  describe("runs: create", () => {
    it("stores the run, its stages and their results in one step", async () => {
      expect(await s().runs.create(run(), [st, pre], [r1, r2])).toBe(true);
      expect(await s().runs.get(run().id)).toStrictEqual(run());
      expect(await s().taskStages.get(st.id)).toStrictEqual(st);
      expect(await s().taskStages.getByRun(run().id, "pre_plan")).toStrictEqual(pre);
      expect(await s().taskResults.listByStage(st.id)).toStrictEqual([r1, r2]);
    });

    it("finds the newest run by plan, apply or configuration version id (D24), null for none", async (c) => {
      if (!s().runs.findByArtifact) return c.skip("the adapter offers no artifact lookup (optional)");
      const older = run();
      const newer = run({ id: rid("run", 2), planId: "plan-BBBBBBBBBBBBBBBB", applyId: "apply-BBBBBBBBBBBBBBBB", createdAt: at(9) });
      await s().runs.create(newer, [], []);
      await s().runs.create(older, [], []);
      expect(await s().runs.findByArtifact!("plan", older.planId)).toStrictEqual(older);
      expect(await s().runs.findByArtifact!("plan", newer.planId)).toStrictEqual(newer);
      expect(await s().runs.findByArtifact!("configuration-version", older.configurationVersionId)).toStrictEqual(newer);
      expect(await s().runs.findByArtifact!("plan", "plan-none")).toBeNull();
      expect(await s().runs.findByArtifact!("configuration-version", older.planId)).toBeNull();
      expect(await s().runs.findByArtifact!("apply", older.applyId)).toStrictEqual(older);
      expect(await s().runs.findByArtifact!("apply", newer.applyId)).toStrictEqual(newer);
      expect(await s().runs.findByArtifact!("apply", older.planId)).toBeNull();
    });

    it("lists the runs naming one artifact id, newest first, at most `limit` (ids may repeat across organizations)", async (c) => {
      if (!s().runs.listByArtifact) return c.skip("the adapter offers no artifact listing (optional)");
      // Ids are the host's: three runs (of any organization) may name one plan and configuration version.
      const named = [1, 2, 3].map((i) => run({ id: rid("run", i), planId: "plan-SHARED", applyId: `apply-${i}`, createdAt: at(i === 2 ? 9 : 5) }));
      for (const r of named) await s().runs.create(r, [], []);
      const [one, two, three] = named as [RunRecord, RunRecord, RunRecord];
      expect(await s().runs.listByArtifact!("plan", "plan-SHARED", 20)).toStrictEqual([two, three, one]);
      expect(await s().runs.listByArtifact!("plan", "plan-SHARED", 2)).toStrictEqual([two, three]);
      expect(await s().runs.listByArtifact!("configuration-version", one.configurationVersionId, 1)).toStrictEqual([two]);
      expect(await s().runs.listByArtifact!("apply", "apply-3", 20)).toStrictEqual([three]);
      expect(await s().runs.listByArtifact!("plan", "plan-none", 20)).toStrictEqual([]);
    });

    it("keeps a run without VCS data or stages", async () => {
      const bare = run({ id: rid("run", 2), vcs: null });
      expect(await s().runs.create(bare, [], [])).toBe(true);
      expect(await s().runs.get(bare.id)).toStrictEqual(bare);
      expect(await s().taskStages.listByRun(bare.id)).toStrictEqual({ items: [], total: 0 });
    });

    it("refuses a second create of the same run id and writes none of its stages or results", async () => {
      await s().runs.create(run(), [st], [r1]);
      const other = stage({ id: rid("ts", 3), stage: "pre_apply", sequence: 2 });
      expect(await s().runs.create(run({ message: "again" }), [other], [result({ id: rid("taskrs", 3), stageId: other.id })])).toBe(false);
      expect((await s().runs.get(run().id))?.message).toBe(run().message);
      expect(await s().taskStages.get(other.id)).toBeNull();
      expect(await s().taskResults.get(rid("taskrs", 3))).toBeNull();
    });

    it("lets exactly one of 10 racing creates of one run id store anything", async () => {
      const outcomes = await race(10, (i) =>
        s().runs.create(run(), [stage({ id: rid("ts", 10 + i) })], [result({ id: rid("taskrs", 10 + i), stageId: rid("ts", 10 + i) })]),
      );
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      expect((await s().taskStages.listByRun(run().id)).total).toBe(1);
    });
  });
}

function taskStageCases2(ctx: ConformanceContext, h: TaskStageHelpers): void {
  const { s, st, pre } = h;

  describe("runs: list by workspace", () => {
    it("lists a workspace's runs newest first, ties by id descending, paged in the store, durably", async () => {
      const ws = "ws-BBBBBBBBBBBBBBBB";
      const old = run({ id: rid("run", 5), workspaceId: ws, createdAt: at(1) });
      const tieLow = run({ id: rid("run", 3), workspaceId: ws, createdAt: at(4) });
      const tieHigh = run({ id: rid("run", 4), workspaceId: ws, createdAt: at(4) });
      const newest = run({ id: rid("run", 1), workspaceId: ws, createdAt: at(9) });
      for (const r of [old, tieLow, newest, tieHigh]) expect(await s().runs.create(r, [], [])).toBe(true);
      await s().runs.create(run({ id: rid("run", 9), createdAt: at(20) }), [], []); // another workspace
      const all = [newest, tieHigh, tieLow, old];
      expect(await s().runs.listByWorkspace(ws, { offset: 0, limit: 20 })).toStrictEqual({ items: all, total: 4 });
      expect(await s().runs.listByWorkspace(ws, { offset: 1, limit: 2 })).toStrictEqual({ items: [tieHigh, tieLow], total: 4 });
      expect(await s().runs.listByWorkspace(ws, { offset: 4, limit: 20 })).toStrictEqual({ items: [], total: 4 });
      expect(await s().runs.listByWorkspace("ws-none", { offset: 0, limit: 5 })).toStrictEqual({ items: [], total: 0 });
      const reopened = await ctx.reopen();
      expect(await reopened.runs.listByWorkspace(ws, { offset: 0, limit: 20 })).toStrictEqual({ items: all, total: 4 });
    });
  });

  describe("task stages: list and transition", () => {
    it("lists a run's stages by sequence, paged in the store", async () => {
      const post = stage({ id: rid("ts", 0), stage: "post_apply", sequence: 3 });
      await s().runs.create(run(), [post, st, pre], []);
      await s().runs.create(run({ id: rid("run", 2) }), [stage({ id: rid("ts", 9), runId: rid("run", 2) })], []);
      expect(await s().taskStages.listByRun(run().id)).toStrictEqual({ items: [pre, st, post], total: 3 });
      expect(await s().taskStages.listByRun(run().id, { offset: 1, limit: 1 })).toStrictEqual({ items: [st], total: 3 });
      expect(await s().taskStages.listByRun(run().id, { offset: 3, limit: 20 })).toStrictEqual({ items: [], total: 3 });
    });

    it("replaces a stage only while status and version match, writing nothing otherwise", async () => {
      await s().runs.create(run(), [st], []);
      const next = started(st);
      expect(await s().taskStages.transition(st.id, { statuses: ["running"], version: 1 }, next)).toBeNull();
      expect(await s().taskStages.transition(st.id, { statuses: ["pending"], version: 7 }, next)).toBeNull();
      expect(await s().taskStages.get(st.id)).toStrictEqual(st);
      expect(await s().taskStages.transition(st.id, { statuses: ["pending", "running"], version: 1 }, next)).toStrictEqual(next);
      expect(await s().taskStages.get(st.id)).toStrictEqual(next);
      expect(await s().taskStages.transition(rid("ts", 99), PENDING, { ...next, id: rid("ts", 99) })).toBeNull();
    });

    it("lets exactly one of 10 racing stage transitions from the same version win", async () => {
      await s().runs.create(run(), [st], []);
      const outcomes = await race(10, (i) =>
        s().taskStages.transition(st.id, PENDING, { ...started(st), overrideComment: `c${i}` }),
      );
      const winners = outcomes.filter((o): o is TaskStageRecord => o !== null);
      expect(winners).toHaveLength(1);
      expect(await s().taskStages.get(st.id)).toStrictEqual(winners[0]);
    });
  });
}

function taskStageCases3(ctx: ConformanceContext, h: TaskStageHelpers): void {
  const { s, st, r1, r2, startWrites } = h;

  describe("task stages: start", () => {
    it("writes the stage, every result and every delivery in one step", async () => {
      await s().runs.create(run(), [st], [r1, r2]);
      const { writes, deliveries } = startWrites();
      expect(await s().taskStages.start(started(st), PENDING, writes, deliveries)).toStrictEqual(started(st));
      expect(await s().taskStages.get(st.id)).toStrictEqual(started(st));
      expect(await s().taskResults.listByStage(st.id)).toStrictEqual(writes.map((w) => w.next));
      expect(await s().taskResults.findByTokenDigest("digest-1")).toStrictEqual(writes[1]!.next);
      expect(await s().taskDeliveries.listByResult(r1.id)).toStrictEqual([deliveries[0]]);
      expect(await s().taskDeliveries.get(deliveries[1]!.id)).toStrictEqual(deliveries[1]);
    });

    it("writes nothing at all when one result's guard fails", async () => {
      await s().runs.create(run(), [st], [r1, r2]);
      const { writes, deliveries } = startWrites();
      writes[1] = { ...writes[1]!, expected: { statuses: ["pending"], version: 5 } };
      expect(await s().taskStages.start(started(st), PENDING, writes, deliveries)).toBeNull();
      expect(await s().taskStages.get(st.id)).toStrictEqual(st);
      expect(await s().taskResults.listByStage(st.id)).toStrictEqual([r1, r2]);
      expect(await s().taskDeliveries.listByResult(r1.id)).toStrictEqual([]);
      expect(await s().taskResults.findByTokenDigest("digest-0")).toBeNull();
    });

    it("lets exactly one of 5 racing starts win and enqueues one delivery per result", async () => {
      await s().runs.create(run(), [st], [r1, r2]);
      const outcomes = await race(5, (i) => {
        const { writes, deliveries } = startWrites(`-${i}`);
        return s().taskStages.start(started(st), PENDING, writes, deliveries);
      });
      expect(outcomes.filter((o) => o !== null)).toHaveLength(1);
      expect(await s().taskDeliveries.listByResult(r1.id)).toHaveLength(1);
      expect(await s().taskDeliveries.listByResult(r2.id)).toHaveLength(1);
    });
  });
}

function taskStageCases5(ctx: ConformanceContext, h: TaskStageHelpers): void {
  const { s, st, pre, r1, r2, startWrites } = h;

  describe("task stages: durability", () => {
    it("keeps runs, started stages, results, outcomes and deliveries through a reopen", async () => {
      await s().runs.create(run(), [st, pre], [r1, r2]);
      const { writes, deliveries } = startWrites();
      await s().taskStages.start(started(st), PENDING, writes, deliveries);
      const final = { ...writes[0]!.next, status: "passed" as const, version: 3, outcomesCount: 1 };
      await s().taskResults.transition(r1.id, { statuses: OPEN, version: 2 }, final, [outcome()]);
      await ctx.reopen();
      expect(await s().runs.get(run().id)).toStrictEqual(run());
      expect(await s().taskStages.listByRun(run().id)).toStrictEqual({ items: [pre, started(st)], total: 2 });
      expect(await s().taskResults.listByStage(st.id)).toStrictEqual([final, writes[1]!.next]);
      expect(await s().taskResultOutcomes.get(outcome().id)).toStrictEqual(outcome());
      expect(await s().taskDeliveries.listByResult(r2.id)).toStrictEqual([deliveries[1]]);
      expect(await s().taskResults.findByTokenDigest("digest-1")).toStrictEqual(writes[1]!.next);
      expect(await s().runs.create(run(), [], [])).toBe(false);
      expect(await s().taskResults.transition(r1.id, { statuses: OPEN, version: 3 }, { ...final, version: 4 })).toBeNull();
    });
  });

  describeTaskDeliveryCases(ctx);
}

/** Runs, task stages, results, outcomes and the delivery outbox (D13, D15, D17, D18). */
export function describeTaskStageCases(ctx: ConformanceContext): void {
  const h = taskStageHelpers(ctx);
  taskStageCases1(ctx, h);
  taskStageCases2(ctx, h);
  taskStageCases3(ctx, h);
  describeTaskResultTransitionCases(ctx, h);
  taskStageCases5(ctx, h);
}
