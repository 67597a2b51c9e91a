import type { TaskStageRecord } from "../../src/schemas/run-task-records.js";
import type { TaskStageStore } from "../../src/storage/run-tasks-types.js";
import { clone } from "./clone.js";
import { cmp, page } from "./ordering.js";
import { holds, OPEN_RESULT, type RunTaskState } from "./run-task-state.js";
import type { MemoryDeliveryStore } from "./task-deliveries.js";

/** Task stages; starting one writes its results' tokens and their outbox rows in the same step. */
export function createMemoryTaskStageStore(state: RunTaskState, deliveryStore: Pick<MemoryDeliveryStore, "insertAll">): TaskStageStore {
  const { stages, results, deliveries, stagesByRun, resultsByDigest, each, putResult } = state;
  const stagesOf = (runId: string): TaskStageRecord[] =>
    each(stages, stagesByRun.ids(runId)).sort((a, b) => cmp(a.sequence, b.sequence) || cmp(a.id, b.id));

  return {
    async get(id) {
      const row = stages.get(id);
      return row ? clone(row) : null;
    },
    async getByRun(runId, stage) {
      const row = each(stages, stagesByRun.ids(runId)).find((s) => s.stage === stage);
      return row ? clone(row) : null;
    },
    async listByRun(runId, request) {
      return page(stagesOf(runId), request);
    },
    async transition(id, expected, next) {
      if (next.id !== id) throw new Error("transition: next.id must equal id");
      const row = stages.get(id);
      if (!row || !holds(row, expected)) return null;
      stages.set(id, clone(next));
      return clone(next);
    },
    async start(next, expected, writes, newDeliveries) {
      const row = stages.get(next.id);
      if (!row || !holds(row, expected)) return null;
      for (const w of writes) {
        const current = results.get(w.next.id);
        if (!current || !holds(current, w.expected)) return null;
      }
      const writing = new Set(writes.map((w) => w.next.id));
      const digestTaken = writes.some(
        (w) => w.next.accessTokenDigest !== null && resultsByDigest.ids(w.next.accessTokenDigest).some((id) => !writing.has(id)),
      );
      if (digestTaken || newDeliveries.some((d) => deliveries.has(d.id))) throw new Error("token digest or delivery id already exists");
      stages.set(next.id, clone(next));
      for (const w of writes) {
        const { accessTokenDigest, deadlineAt, deadlineMaxAt, version, updatedAt } = w.next;
        putResult(w.next.id, { accessTokenDigest, agentPoolId: w.next.agentPoolId ?? null, deadlineAt, deadlineMaxAt, version, updatedAt });
      }
      deliveryStore.insertAll(newDeliveries);
      return clone(next);
    },
    async listUnsettled(limit) {
      const open = new Set([...results.values()].filter((r) => OPEN_RESULT.has(r.status)).map((r) => r.stageId));
      return [...stages.values()]
        .filter((st) => st.status === "running" && !open.has(st.id))
        .sort((a, b) => cmp(a.id, b.id))
        .slice(0, limit)
        .map(clone);
    },
  };
}
