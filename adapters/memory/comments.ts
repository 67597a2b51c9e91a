import type { CommentRecord } from "../../src/schemas/run-comments.js";
import type { CommentStore } from "../../src/storage/comments-types.js";
import { createIndex } from "./indexes.js";
import { clone } from "./clone.js";

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Run comments in memory: an insert counts and writes synchronously, so its limit holds without locks. */
export function createMemoryCommentStore(): CommentStore {
  const rows = new Map<string, CommentRecord>();
  const byRun = createIndex<CommentRecord>((c) => c.runId);
  const ofRun = (runId: string): CommentRecord[] =>
    byRun
      .ids(runId)
      .map((id) => rows.get(id)!)
      .sort((a, b) => cmp(a.createdAt, b.createdAt) || cmp(a.id, b.id));
  return {
    async get(id) {
      const row = rows.get(id);
      return row ? clone(row) : null;
    },
    async insert(record, maxPerRun) {
      if (rows.has(record.id)) throw new Error("comment id already exists");
      if (byRun.ids(record.runId).length >= maxPerRun) return { ok: false, reason: "limit" };
      rows.set(record.id, clone(record));
      byRun.add(record);
      return { ok: true };
    },
    async listByRun(runId, request) {
      const all = ofRun(runId);
      return { items: (request ? all.slice(request.offset, request.offset + request.limit) : all).map(clone), total: all.length };
    },
  };
}
