import type { CommentRecord } from "../../src/schemas/run-comments.js";
import type { TableColumns } from "./statements.js";

/** The `run_comments` table, shared by the SQLite and PostgreSQL adapters. */
export interface CommentRow {
  id: string;
  run_id: string;
  workspace_id: string;
  organization: string;
  body: string;
  author_id: string | null;
  created_at: string;
}
export const COMMENTS: TableColumns<CommentRow> = {
  table: "run_comments",
  columns: ["id", "run_id", "workspace_id", "organization", "body", "author_id", "created_at"],
};
export const toCommentRow = (r: CommentRecord): CommentRow => ({
  id: r.id,
  run_id: r.runId,
  workspace_id: r.workspaceId,
  organization: r.organization,
  body: r.body,
  author_id: r.authorId,
  created_at: r.createdAt,
});
export const fromCommentRow = (row: CommentRow): CommentRecord => ({
  id: row.id,
  runId: row.run_id,
  workspaceId: row.workspace_id,
  organization: row.organization,
  body: row.body,
  authorId: row.author_id,
  createdAt: row.created_at,
});
