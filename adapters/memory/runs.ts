import type { RunStore } from "../../src/storage/run-tasks-types.js";
import { clone } from "./clone.js";
import { cmp } from "./ordering.js";
import type { RunTaskState } from "./run-task-state.js";

/** Runs; creating one writes its stages and results in the same step. */
export function createMemoryRunStore(state: RunTaskState): RunStore {
  const { runs, stages, results, runsByWorkspace, stagesByRun, resultsByStage, resultsByDigest, each } = state;
  const runStore: RunStore = {
    async get(id) {
      const row = runs.get(id);
      return row ? clone(row) : null;
    },
    async findByArtifact(kind, id) {
      return (await runStore.listByArtifact!(kind, id, 1))[0] ?? null;
    },
    // decision D24: ids may repeat across organizations; newest first (createdAt, then id), at most `limit`.
    async listByArtifact(kind, id, limit) {
      const named = [...runs.values()].filter((run) => (kind === "plan" ? run.planId : kind === "apply" ? run.applyId : run.configurationVersionId) === id);
      named.sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));
      return named.slice(0, limit).map(clone);
    },
    async create(run, newStages, newResults) {
      if (runs.has(run.id)) return false;
      const clash = newStages.some((s) => stages.has(s.id)) || newResults.some((r) => results.has(r.id));
      if (clash) throw new Error("task stage or result id already exists");
      runs.set(run.id, clone(run));
      runsByWorkspace.add(run);
      for (const s of newStages) {
        stages.set(s.id, clone(s));
        stagesByRun.add(s);
      }
      for (const r of newResults) {
        results.set(r.id, clone(r));
        resultsByStage.add(r);
        resultsByDigest.add(r);
      }
      return true;
    },
    async listByWorkspace(workspaceId, request) {
      const all = each(runs, runsByWorkspace.ids(workspaceId)).sort((a, b) => cmp(b.createdAt, a.createdAt) || cmp(b.id, a.id));
      return { items: all.slice(request.offset, request.offset + request.limit).map(clone), total: all.length };
    },
  };
  return runStore;
}
