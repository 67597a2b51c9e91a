import type { CommentStore } from "../../src/storage/comments-types.js";
import { COMMENTS, fromCommentRow, toCommentRow, type CommentRow } from "../sql/comment-rows.js";
import { columnList, insertSql } from "../sql/statements.js";
import type { PgPoolLike } from "./driver.js";
import { changed, rowsOf, sql, transaction } from "./driver.js";
import { pageFrom, pageOf, type PagedRow } from "./pages.js";
import type { PgMigration } from "./migration.js";
import { qualified, TEXT } from "./sql.js";

/**
 * Comments on runs, and each run's apply id. Runs stored before get `apply-<run id>`:
 * unique because run ids are, and never a generated id (those are `apply-` and 16 base62 characters).
 */
export const RUN_COMMENTS_MIGRATION: PgMigration = {
  name: "0010-run-comments-and-applies",
  up: (q) => `
    CREATE TABLE ${q}run_comments (
      id ${TEXT} PRIMARY KEY, run_id ${TEXT} NOT NULL, workspace_id ${TEXT} NOT NULL, organization ${TEXT} NOT NULL,
      body ${TEXT} NOT NULL, author_id ${TEXT}, created_at ${TEXT} NOT NULL);
    -- decision D7: a run's comments page in this order; the per-run limit counts this index.
    CREATE INDEX run_comments_by_run ON ${q}run_comments (run_id, created_at, id);
    ALTER TABLE ${q}runs ADD COLUMN apply_id ${TEXT};
    UPDATE ${q}runs SET apply_id = 'apply-' || id;
    ALTER TABLE ${q}runs ALTER COLUMN apply_id SET NOT NULL;
    CREATE INDEX runs_by_apply ON ${q}runs (apply_id, created_at, id);
  `,
};

/** Keys the per-run lock of a comment insert apart from every other advisory lock (two-key space). */
const COMMENT_LOCK_CLASS = 27;

export function createCommentStore(pool: PgPoolLike, q: string): CommentStore {
  const table = `${q}run_comments`;
  const columns = columnList(COMMENTS);
  const s = {
    // READ COMMITTED gives each statement its own snapshot: the count after the lock sees every
    // comment committed before it, so racing inserts into one run count one after the other.
    lock: sql(`SELECT pg_advisory_xact_lock(${COMMENT_LOCK_CLASS}, hashtext(@run_id))`),
    insert: sql(`${insertSql(qualified(q, COMMENTS))} ON CONFLICT DO NOTHING`),
    count: sql(`SELECT count(*)::int AS total FROM ${table} WHERE run_id = @run_id`),
    get: sql(`SELECT ${columns} FROM ${table} WHERE id = @id`),
    all: sql(`SELECT ${columns} FROM ${table} WHERE run_id = @run_id ORDER BY created_at, id`),
    page: sql(pageOf(table, columns, "run_id = @run_id", "created_at, id")),
  };
  return {
    async get(id) {
      const [row] = await rowsOf<CommentRow>(pool, s.get, { id });
      return row ? fromCommentRow(row) : null;
    },
    insert: (record, maxPerRun) =>
      transaction(pool, async (client) => {
        await rowsOf(client, s.lock, { run_id: record.runId });
        const [count] = await rowsOf<{ total: number }>(client, s.count, { run_id: record.runId });
        if ((count?.total ?? 0) >= maxPerRun) return { ok: false, reason: "limit" } as const;
        // A reused id is a programming error (contract): refused by the primary key, it throws.
        if ((await changed(client, s.insert, toCommentRow(record))) !== 1) throw new Error(`comment id ${record.id} already exists`);
        return { ok: true } as const;
      }),
    async listByRun(runId, request) {
      if (request) return pageFrom(await rowsOf<PagedRow<CommentRow>>(pool, s.page, { run_id: runId, ...request }), fromCommentRow);
      const items = (await rowsOf<CommentRow>(pool, s.all, { run_id: runId })).map(fromCommentRow);
      return { items, total: items.length };
    },
  };
}
