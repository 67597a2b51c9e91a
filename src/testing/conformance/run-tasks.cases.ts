import { describe, expect, it } from "vitest";
import { race, wins, type ConformanceContext } from "./context.js";
import { at } from "./fixtures.js";
import { rid, runTask, workspaceTask } from "./run-task-fixtures.js";
import { describeTaskStageCases } from "./task-stages.cases.js";

function runTaskHelpers(ctx: ConformanceContext) {
  const tasks = () => ctx.storage.runTasks;
  const wsTasks = () => ctx.storage.workspaceTasks;
  const a = runTask();
  return { tasks, wsTasks, a };
}

function runTaskCases1(ctx: ConformanceContext, h: ReturnType<typeof runTaskHelpers>): void {
  const { tasks, a } = h;

  describe("run tasks: every method", () => {
    it("returns a promise and resolves null, false or empty for what is not there", async () => {
      const s = ctx.storage;
      const calls: [string, () => Promise<unknown>, unknown][] = [
        ["runTasks.get", () => s.runTasks.get("none"), null],
        ["runTasks.list", () => s.runTasks.list("none"), { items: [], total: 0 }],
        ["runTasks.update", () => s.runTasks.update(runTask({ id: "none" }), 1), { ok: false, reason: "missing" }],
        ["runTasks.delete", () => s.runTasks.delete("none"), false],
        ["workspaceTasks.get", () => s.workspaceTasks.get("none"), null],
        ["workspaceTasks.list", () => s.workspaceTasks.list("none", { offset: 0, limit: 5 }), { items: [], total: 0 }],
        ["workspaceTasks.listByTask", () => s.workspaceTasks.listByTask("none"), []],
        ["workspaceTasks.update", () => s.workspaceTasks.update(workspaceTask({ id: "none" }), 1), { ok: false, reason: "missing" }],
        ["workspaceTasks.delete", () => s.workspaceTasks.delete("none"), false],
        ["runs.get", () => s.runs.get("none"), null],
        ["taskStages.get", () => s.taskStages.get("none"), null],
        ["taskStages.getByRun", () => s.taskStages.getByRun("none", "post_plan"), null],
        ["taskStages.listByRun", () => s.taskStages.listByRun("none"), { items: [], total: 0 }],
        ["taskResults.get", () => s.taskResults.get("none"), null],
        ["taskResults.listByStage", () => s.taskResults.listByStage("none"), []],
        ["taskResults.findByTokenDigest", () => s.taskResults.findByTokenDigest("none"), null],
        ["taskResultOutcomes.get", () => s.taskResultOutcomes.get("none"), null],
        ["taskResultOutcomes.list", () => s.taskResultOutcomes.list("none", { sort: "position" }, { offset: 0, limit: 5 }), { items: [], total: 0 }],
        ["taskDeliveries.get", () => s.taskDeliveries.get("none"), null],
        ["taskDeliveries.listByResult", () => s.taskDeliveries.listByResult("none"), []],
      ];
      for (const [name, call, expected] of calls) {
        const pending = call();
        expect(pending, name).toBeInstanceOf(Promise);
        expect(await pending, name).toStrictEqual(expected);
      }
    });
  });

  describe("run tasks: insert, get, uniqueness", () => {
    it("returns an inserted task unchanged, a task without key or description too", async () => {
      const b = runTask({ id: rid("task", 2), name: "other", hmacKey: null, description: null, enabled: false });
      expect(await tasks().insert(a)).toStrictEqual({ ok: true });
      expect(await tasks().insert(b)).toStrictEqual({ ok: true });
      expect(await tasks().get(a.id)).toStrictEqual(a);
      expect(await tasks().get(b.id)).toStrictEqual(b);
    });

    it("refuses a second name in the same organization with duplicate-name, writing nothing", async () => {
      await tasks().insert(a);
      const again = runTask({ id: rid("task", 2) });
      expect(await tasks().insert(again)).toStrictEqual({ ok: false, reason: "duplicate-name" });
      expect(await tasks().get(again.id)).toBeNull();
      expect(await tasks().insert(runTask({ id: rid("task", 3), organization: "other" }))).toStrictEqual({ ok: true });
    });

    it("never overwrites a stored task when an insert reuses its id", async () => {
      await tasks().insert(a);
      const result = await tasks().insert(runTask({ name: "different" })).catch(() => ({ ok: false }));
      expect(result.ok).toBe(false);
      expect(await tasks().get(a.id)).toStrictEqual(a);
    });

    it("reads several tasks in one call, ordered by id, an unknown or repeated id left out (optional getMany)", async ({ skip }) => {
      if (!tasks().getMany) return skip("the adapter offers no getMany");
      const b = runTask({ id: rid("task", 2), name: "other", organization: "other", hmacKey: null });
      await tasks().insert(b);
      await tasks().insert(a);
      expect(await tasks().getMany!([b.id, "none", a.id, b.id])).toStrictEqual([a, b].sort((x, y) => (x.id < y.id ? -1 : 1)));
      expect(await tasks().getMany!([])).toStrictEqual([]);
      expect(await tasks().getMany!(["none"])).toStrictEqual([]);
    });

    it("lets exactly one of 10 racing inserts of the same name win", async () => {
      const results = await race(10, (i) => tasks().insert(runTask({ id: rid("task", 10 + i) })));
      expect(wins(results)).toBe(1);
      expect((await tasks().list("acme")).total).toBe(1);
    });
  });
}

function runTaskCases2(ctx: ConformanceContext, h: ReturnType<typeof runTaskHelpers>): void {
  const { tasks, wsTasks, a } = h;

  describe("run tasks: list", () => {
    const rows = [
      runTask({ id: rid("task", 9), name: "n1", createdAt: at(1) }),
      runTask({ id: rid("task", 5), name: "n2", createdAt: at(2) }),
      runTask({ id: rid("task", 7), name: "n3", createdAt: at(2) }),
      runTask({ id: rid("task", 1), name: "n4", createdAt: at(3) }),
    ];
    const ordered = [rows[0], rows[1], rows[2], rows[3]];

    it("orders by createdAt, then id, pages in the store and counts the organization's tasks", async () => {
      for (const index of [3, 1, 0, 2]) await tasks().insert(rows[index]!);
      await tasks().insert(runTask({ id: rid("task", 20), organization: "other" }));
      expect(await tasks().list("acme")).toStrictEqual({ items: ordered, total: 4 });
      expect(await tasks().list("acme", { offset: 1, limit: 2 })).toStrictEqual({ items: ordered.slice(1, 3), total: 4 });
      expect(await tasks().list("acme", { offset: 8, limit: 2 })).toStrictEqual({ items: [], total: 4 });
    });
  });

  describe("run tasks: update and delete", () => {
    const next = runTask({
      name: "renamed",
      url: "https://x.example",
      hmacKey: null,
      enabled: false,
      globalConfiguration: { enabled: false, stages: ["post_apply"], enforcementLevel: "advisory" },
      version: 2,
      updatedAt: at(9),
    });

    it("replaces while the version matches; stale, missing and duplicate-name otherwise, writing nothing", async () => {
      await tasks().insert(a);
      await tasks().insert(runTask({ id: rid("task", 2), name: "taken" }));
      expect(await tasks().update({ ...next, name: "taken" }, 1)).toStrictEqual({ ok: false, reason: "duplicate-name" });
      expect(await tasks().update(next, 1)).toStrictEqual({ ok: true });
      expect(await tasks().get(a.id)).toStrictEqual(next);
      expect(await tasks().update({ ...next, version: 3, name: "late" }, 1)).toStrictEqual({ ok: false, reason: "stale" });
      expect(await tasks().get(a.id)).toStrictEqual(next);
      expect(await tasks().update(runTask({ id: rid("task", 99) }), 1)).toStrictEqual({ ok: false, reason: "missing" });
    });

    it("lets exactly one of 10 racing updates from the same version win", async () => {
      await tasks().insert(a);
      const results = await race(10, (i) => tasks().update({ ...next, name: `n${i}` }, 1));
      expect(wins(results)).toBe(1);
      expect(results.filter((r) => !r.ok)).toStrictEqual(Array(9).fill({ ok: false, reason: "stale" }));
    });

    it("deletes a task together with the workspace tasks that refer to it", async () => {
      await tasks().insert(a);
      await tasks().insert(runTask({ id: rid("task", 2), name: "keep" }));
      await wsTasks().insert(workspaceTask());
      await wsTasks().insert(workspaceTask({ id: rid("wstask", 2), workspaceId: "ws-B" }));
      await wsTasks().insert(workspaceTask({ id: rid("wstask", 3), taskId: rid("task", 2) }));
      expect(await tasks().delete(a.id)).toBe(true);
      expect(await tasks().get(a.id)).toBeNull();
      expect(await wsTasks().get(rid("wstask", 1))).toBeNull();
      expect(await wsTasks().get(rid("wstask", 2))).toBeNull();
      expect((await wsTasks().get(rid("wstask", 3)))?.taskId).toBe(rid("task", 2));
      expect(await tasks().delete(a.id)).toBe(false);
    });

    it("lets exactly one of 10 racing deletes report true", async () => {
      await tasks().insert(a);
      expect(wins(await race(10, () => tasks().delete(a.id)))).toBe(1);
    });
  });
}

function runTaskCases3(ctx: ConformanceContext, h: ReturnType<typeof runTaskHelpers>): void {
  const { tasks, wsTasks, a } = h;

  describe("workspace tasks", () => {
    const w = workspaceTask();

    it("inserts and returns a workspace task unchanged", async () => {
      await tasks().insert(a);
      expect(await wsTasks().insert(w)).toStrictEqual({ ok: true });
      expect(await wsTasks().get(w.id)).toStrictEqual(w);
    });

    it("refuses a task that does not exist (missing-task) and a second attachment (duplicate-task)", async () => {
      expect(await wsTasks().insert(w)).toStrictEqual({ ok: false, reason: "missing-task" });
      await tasks().insert(a);
      await wsTasks().insert(w);
      expect(await wsTasks().insert(workspaceTask({ id: rid("wstask", 2) }))).toStrictEqual({ ok: false, reason: "duplicate-task" });
      expect(await wsTasks().get(rid("wstask", 2))).toBeNull();
      expect(await wsTasks().insert(workspaceTask({ id: rid("wstask", 3), workspaceId: "ws-B" }))).toStrictEqual({ ok: true });
    });

    it("lets exactly one of 10 racing attachments of one task to one workspace win", async () => {
      await tasks().insert(a);
      const results = await race(10, (i) => wsTasks().insert(workspaceTask({ id: rid("wstask", 10 + i) })));
      expect(wins(results)).toBe(1);
      expect((await wsTasks().list(w.workspaceId)).total).toBe(1);
    });

    it("lists one workspace's tasks by createdAt, then id, paged in the store", async () => {
      for (let i = 0; i < 3; i++) await tasks().insert(runTask({ id: rid("task", i), name: `t${i}` }));
      const rows = [
        workspaceTask({ id: rid("wstask", 8), taskId: rid("task", 0), createdAt: at(1) }),
        workspaceTask({ id: rid("wstask", 2), taskId: rid("task", 1), createdAt: at(2) }),
        workspaceTask({ id: rid("wstask", 5), taskId: rid("task", 2), createdAt: at(2) }),
      ];
      for (const index of [2, 0, 1]) await wsTasks().insert(rows[index]!);
      await wsTasks().insert(workspaceTask({ id: rid("wstask", 9), workspaceId: "ws-B", taskId: rid("task", 0) }));
      expect(await wsTasks().list(w.workspaceId)).toStrictEqual({ items: rows, total: 3 });
      expect(await wsTasks().list(w.workspaceId, { offset: 2, limit: 5 })).toStrictEqual({ items: rows.slice(2), total: 3 });
    });

    it("lists one task's workspace tasks across workspaces by createdAt, then id", async () => {
      for (let i = 0; i < 2; i++) await tasks().insert(runTask({ id: rid("task", i), name: `t${i}` }));
      const mine = [
        workspaceTask({ id: rid("wstask", 7), workspaceId: "ws-C", taskId: rid("task", 0), createdAt: at(1) }),
        workspaceTask({ id: rid("wstask", 3), workspaceId: "ws-A", taskId: rid("task", 0), createdAt: at(2) }),
        workspaceTask({ id: rid("wstask", 4), workspaceId: "ws-B", taskId: rid("task", 0), createdAt: at(2) }),
      ];
      for (const index of [2, 0, 1]) await wsTasks().insert(mine[index]!);
      await wsTasks().insert(workspaceTask({ id: rid("wstask", 1), workspaceId: "ws-A", taskId: rid("task", 1), createdAt: at(0) }));
      expect(await wsTasks().listByTask(rid("task", 0))).toStrictEqual(mine);
      await wsTasks().delete(rid("wstask", 3));
      expect((await wsTasks().listByTask(rid("task", 0))).map((w) => w.id)).toStrictEqual([rid("wstask", 7), rid("wstask", 4)]);
    });

    it("updates while the version matches, one winner among racers, and deletes", async () => {
      await tasks().insert(a);
      await wsTasks().insert(w);
      const next = { ...w, enforcementLevel: "advisory" as const, stages: ["post_apply" as const], version: 2, updatedAt: at(9) };
      const results = await race(5, () => wsTasks().update(next, 1));
      expect(wins(results)).toBe(1);
      expect(await wsTasks().get(w.id)).toStrictEqual(next);
      expect(await wsTasks().update({ ...next, version: 3 }, 1)).toStrictEqual({ ok: false, reason: "stale" });
      expect(await wsTasks().delete(w.id)).toBe(true);
      expect(await wsTasks().delete(w.id)).toBe(false);
      expect(await wsTasks().update({ ...next, version: 3 }, 2)).toStrictEqual({ ok: false, reason: "missing" });
    });
  });
}

function runTaskCases4(ctx: ConformanceContext, h: ReturnType<typeof runTaskHelpers>): void {
  const { tasks, wsTasks, a } = h;

  describe("run tasks: durability", () => {
    it("keeps tasks, workspace tasks, updates and cascaded deletes through a reopen", async () => {
      const b = runTask({ id: rid("task", 2), name: "b" });
      await tasks().insert(a);
      await tasks().insert(b);
      await wsTasks().insert(workspaceTask());
      await wsTasks().insert(workspaceTask({ id: rid("wstask", 2), taskId: b.id }));
      await tasks().update({ ...a, name: "a2", version: 2 }, 1);
      await tasks().delete(b.id);
      await ctx.reopen();
      expect(await tasks().list("acme")).toStrictEqual({ items: [{ ...a, name: "a2", version: 2 }], total: 1 });
      expect((await wsTasks().list(workspaceTask().workspaceId)).items).toStrictEqual([workspaceTask()]);
      expect(await tasks().insert(runTask({ id: rid("task", 3), name: "a2" }))).toStrictEqual({ ok: false, reason: "duplicate-name" });
    });
  });

  describeTaskStageCases(ctx);
}

/**
 * Organization run tasks and workspace tasks (`RunTaskStore`, `WorkspaceTaskStore`), then the
 * runs, stages, results, outcomes and outbox cases of `task-stages.cases.ts`.
 */
export function describeRunTaskCases(ctx: ConformanceContext): void {
  const h = runTaskHelpers(ctx);
  runTaskCases1(ctx, h);
  runTaskCases2(ctx, h);
  runTaskCases3(ctx, h);
  runTaskCases4(ctx, h);
}
