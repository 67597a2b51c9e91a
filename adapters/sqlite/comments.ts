import type { CommentRecord } from "../../src/schemas/run-comments.js";
import type { Page, PageRequest } from "../../src/schemas/records.js";
import type { CommentStore } from "../../src/storage/comments-types.js";
import { COMMENTS, fromCommentRow, toCommentRow, type CommentRow } from "../sql/comment-rows.js";
import { insertSql } from "../sql/statements.js";
import type { SqliteDatabase, SqliteStatement } from "./driver.js";
import { deferredTx, immediateTx } from "./driver.js";
import type { Migration } from "./migration.js";

/**
 * Comments on runs, and each run's apply id. Runs stored before get `apply-<run id>`:
 * unique because run ids are, and never a generated id (those are `apply-` and 16 base62 characters).
 */
export const RUN_COMMENTS_MIGRATION: Migration = {
  name: "0013-run-comments-and-applies",
  up: `
    CREATE TABLE run_comments (
      id TEXT PRIMARY KEY NOT NULL,
      run_id TEXT NOT NULL,
      workspace_id TEXT NOT NULL,
      organization TEXT NOT NULL,
      body TEXT NOT NULL,
      author_id TEXT,
      created_at TEXT NOT NULL
    ) STRICT;
    -- decision D7: a run's comments page in this order; the per-run limit counts this index.
    CREATE INDEX run_comments_by_run ON run_comments (run_id, created_at, id);
    ALTER TABLE runs ADD COLUMN apply_id TEXT NOT NULL DEFAULT '';
    UPDATE runs SET apply_id = 'apply-' || id;
    CREATE INDEX runs_by_apply ON runs (apply_id, created_at, id);
  `,
};

/** The statements, exported so the adapter tests can check their query plans. */
export const COMMENT_SQL = {
  insert: insertSql(COMMENTS),
  get: `SELECT * FROM run_comments WHERE id = ?`,
  count: `SELECT COUNT(*) AS total FROM run_comments WHERE run_id = ?`,
  all: `SELECT * FROM run_comments WHERE run_id = ? ORDER BY created_at, id`,
  page: `SELECT * FROM run_comments WHERE run_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?`,
} as const;

/** Run comments in SQLite: the limit's count and the insert share one BEGIN IMMEDIATE. */
export function createCommentStore(db: SqliteDatabase): CommentStore {
  const s = Object.fromEntries(Object.entries(COMMENT_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Record<keyof typeof COMMENT_SQL, SqliteStatement>;
  const count = (runId: string): number => (s.count.get(runId) as { total: number }).total;
  const insert = immediateTx(db, (record: CommentRecord, maxPerRun: number): boolean => {
    if (count(record.runId) >= maxPerRun) return false;
    s.insert.run(toCommentRow(record));
    return true;
  });
  // One snapshot: the page and its total agree.
  const list = deferredTx(db, (runId: string, request?: PageRequest): Page<CommentRecord> => ({
    items: ((request ? s.page.all(runId, request.limit, request.offset) : s.all.all(runId)) as CommentRow[]).map(fromCommentRow),
    total: count(runId),
  }));
  return {
    async get(id) {
      const row = s.get.get(id);
      return row ? fromCommentRow(row as CommentRow) : null;
    },
    insert: async (record, maxPerRun) => (insert(record, maxPerRun) ? { ok: true } : { ok: false, reason: "limit" }),
    listByRun: async (runId, request) => list(runId, request),
  };
}
