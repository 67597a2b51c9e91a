import type { ApiTokenRecord, Page, PageRequest } from "../../src/schemas/records.js";
import type { ApiTokenListFilter, ApiTokenStore } from "../../src/storage/types.js";
import { API_TOKENS, fromApiTokenRow, toApiTokenRow, type ApiTokenRow } from "../sql/rows.js";
import { insertIgnoreSql, touchSql } from "../sql/statements.js";
import type { SqliteDatabase } from "./driver.js";
import { deferredTx, immediateTx } from "./driver.js";

// Tokens are few per organization: no index of their own (listing them is for operators).
const LISTED = `organization = @organization AND (@team IS NULL OR (kind = 'team' AND team_id = @team))`;

export function createApiTokenStore(db: SqliteDatabase): ApiTokenStore {
  // ON CONFLICT DO NOTHING without a target covers both the id and the digest constraint.
  const insertRow = db.prepare(insertIgnoreSql(API_TOKENS));
  const byId = db.prepare(`SELECT * FROM api_tokens WHERE id = ?`);
  const byDigest = db.prepare(`SELECT * FROM api_tokens WHERE digest = ?`);
  const touchRow = db.prepare(touchSql("api_tokens"));
  const deleteRow = db.prepare(`DELETE FROM api_tokens WHERE id = ?`);
  // LIMIT -1: every row, when no page is asked for.
  const pageRows = db.prepare(`SELECT * FROM api_tokens WHERE ${LISTED} ORDER BY created_at, id LIMIT @limit OFFSET @offset`);
  const countRows = db.prepare(`SELECT COUNT(*) AS total FROM api_tokens WHERE ${LISTED}`);

  const insert = immediateTx(db, (record: ApiTokenRecord) => insertRow.run(toApiTokenRow(record)).changes === 1);
  const touch = immediateTx(db, (id: string, at: string) => touchRow.run({ id, at }).changes === 1);
  const remove = immediateTx(db, (id: string) => deleteRow.run(id).changes === 1);
  // One read transaction, so the page and its total see the same snapshot.
  const list = deferredTx(db, (filter: ApiTokenListFilter, page: PageRequest | undefined): Page<ApiTokenRecord> => {
    const where = { organization: filter.organization, team: filter.teamId ?? null };
    const rows = pageRows.all({ ...where, limit: page?.limit ?? -1, offset: page?.offset ?? 0 }) as ApiTokenRow[];
    return { items: rows.map(fromApiTokenRow), total: (countRows.get(where) as { total: number }).total };
  });
  const one = (row: unknown): ApiTokenRecord | null => (row ? fromApiTokenRow(row as ApiTokenRow) : null);

  return {
    insert: async (record) => insert(record),
    get: async (id) => one(byId.get(id)),
    findByDigest: async (digest) => one(byDigest.get(digest)),
    touch: async (id, at) => touch(id, at),
    delete: async (id) => remove(id),
    list: async (filter, page) => list(filter, page),
  };
}
