import type { TaskResultRecord } from "../../src/schemas/run-task-records.js";
import type { TaskResultOutcomeStore, TaskResultStore } from "../../src/storage/run-tasks-types.js";
import { clone } from "./clone.js";
import { cmp, page } from "./ordering.js";
import { holds, OPEN_RESULT, type RunTaskState } from "./run-task-state.js";

/**
 * A copy of a stored result: its only field that is not a string, a number, a boolean or null is
 * its map of status times (strings). A stage start reads every result of its stage.
 */
export const copyResult = (r: TaskResultRecord): TaskResultRecord => ({ ...r, statusTimestamps: { ...r.statusTimestamps } });

/** Task results; a transition stores the outcomes it adds in the same step. */
export function createMemoryTaskResultStore(state: RunTaskState): TaskResultStore {
  const { results, outcomes, resultsByStage, resultsByDigest, outcomesByResult, each, putResult } = state;
  return {
    async get(id) {
      const row = results.get(id);
      return row ? copyResult(row) : null;
    },
    async listByStage(stageId) {
      return each(results, resultsByStage.ids(stageId))
        .sort((a, b) => cmp(a.position, b.position) || cmp(a.id, b.id))
        .map(copyResult);
    },
    async findByTokenDigest(digest) {
      const [id] = resultsByDigest.ids(digest);
      const row = id === undefined ? undefined : results.get(id);
      return row ? copyResult(row) : null;
    },
    async transition(id, expected, next, added = []) {
      if (next.id !== id) throw new Error("transition: next.id must equal id");
      const row = results.get(id);
      if (!row || !holds(row, expected)) return null;
      if (added.some((o) => outcomes.has(o.id))) throw new Error("outcome id already exists");
      putResult(id, clone(next));
      for (const o of added) {
        outcomes.set(o.id, clone(o));
        outcomesByResult.add(o);
      }
      return clone(next);
    },
    async listPastDeadline(now, limit) {
      return [...results.values()]
        .filter((r) => r.deadlineAt !== null && r.deadlineAt <= now && OPEN_RESULT.has(r.status))
        .sort((a, b) => cmp(a.deadlineAt!, b.deadlineAt!) || cmp(a.id, b.id))
        .slice(0, limit)
        .map(clone);
    },
  };
}

/** A result's outcomes, filtered and ordered in the store. */
export function createMemoryOutcomeStore(state: RunTaskState): TaskResultOutcomeStore {
  const { outcomes, outcomesByResult, each } = state;
  return {
    async get(id) {
      const row = outcomes.get(id);
      return row ? clone(row) : null;
    },
    async list(taskResultId, query, request) {
      const all = each(outcomes, outcomesByResult.ids(taskResultId))
        .filter(
          (o) =>
            (query.severity === undefined || o.severityLabel === query.severity) &&
            (query.status === undefined || o.statusLabel === query.status),
        )
        .sort((a, b) =>
          (query.sort === "severity" ? b.severityRank - a.severityRank : 0) || cmp(a.position, b.position) || cmp(a.id, b.id),
        );
      return page(all, request);
    },
    async bodyBytes(taskResultId) {
      return each(outcomes, outcomesByResult.ids(taskResultId)).reduce((sum, o) => sum + (o.body === null ? 0 : Buffer.byteLength(o.body, "utf8")), 0);
    },
  };
}
