import type { ApiTokenStore } from "../../src/storage/types.js";
import { API_TOKENS, fromApiTokenRow, toApiTokenRow, type ApiTokenRow } from "../sql/rows.js";
import { columnList, insertIgnoreSql, touchSql } from "../sql/statements.js";
import type { PgPoolLike } from "./driver.js";
import { changed, rowsOf, sql } from "./driver.js";
import { pageFrom, pageOf, type PagedRow } from "./pages.js";
import { createReadGroup } from "./read-group.js";
import { qualified } from "./sql.js";

const COLUMNS = columnList(API_TOKENS);
// Tokens are few per organization: no index of their own (listing them is for operators).
const LISTED = `organization = @organization AND (@team::text IS NULL OR (kind = 'team' AND team_id = @team::text))`;

export function createApiTokenStore(pool: PgPoolLike, q: string): ApiTokenStore {
  const s = {
    // No conflict target: a taken id and a taken digest both refuse the insert.
    insert: sql(insertIgnoreSql(qualified(q, API_TOKENS))),
    byId: sql(`SELECT ${COLUMNS} FROM ${q}api_tokens WHERE id = @id`),
    byDigest: sql(`SELECT ${COLUMNS} FROM ${q}api_tokens WHERE digest = ANY(@keys::text[])`),
    touch: sql(touchSql(`${q}api_tokens`)),
    delete: sql(`DELETE FROM ${q}api_tokens WHERE id = @id`),
    // LIMIT NULL: every row, when no page is asked for.
    page: sql(pageOf(`${q}api_tokens`, COLUMNS, LISTED, "created_at, id")),
  };
  const one = (list: ApiTokenRow[]) => (list[0] ? fromApiTokenRow(list[0]) : null);
  // Every API request starts with this lookup: the requests of one event-loop turn share one
  // statement (read-group.ts), each still read after its request asked.
  const byDigest = createReadGroup<ApiTokenRow>(pool, s.byDigest, (row) => row.digest, setImmediate);
  return {
    insert: async (record) => (await changed(pool, s.insert, toApiTokenRow(record))) === 1,
    get: async (id) => one(await rowsOf<ApiTokenRow>(pool, s.byId, { id })),
    findByDigest: async (digest) => one(await byDigest(digest)),
    touch: async (id, at) => (await changed(pool, s.touch, { id, at })) === 1,
    delete: async (id) => (await changed(pool, s.delete, { id })) === 1,
    async list(filter, page) {
      const params = { organization: filter.organization, team: filter.teamId ?? null, limit: page?.limit ?? null, offset: page?.offset ?? 0 };
      return pageFrom(await rowsOf<PagedRow<ApiTokenRow>>(pool, s.page, params), fromApiTokenRow);
    },
  };
}
