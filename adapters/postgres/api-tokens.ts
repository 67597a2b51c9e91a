import type { ApiTokenStore } from "../../src/storage/types.js";
import { API_TOKENS, fromApiTokenRow, toApiTokenRow, type ApiTokenRow } from "../sql/rows.js";
import { columnList, insertIgnoreSql, touchSql } from "../sql/statements.js";
import type { PgPoolLike } from "./driver.js";
import { changed, rowsOf, sql } from "./driver.js";
import { createReadGroup } from "./read-group.js";
import { qualified } from "./sql.js";

const COLUMNS = columnList(API_TOKENS);

export function createApiTokenStore(pool: PgPoolLike, q: string): ApiTokenStore {
  const s = {
    // No conflict target: a taken id and a taken digest both refuse the insert.
    insert: sql(insertIgnoreSql(qualified(q, API_TOKENS))),
    byId: sql(`SELECT ${COLUMNS} FROM ${q}api_tokens WHERE id = @id`),
    byDigest: sql(`SELECT ${COLUMNS} FROM ${q}api_tokens WHERE digest = ANY(@keys::text[])`),
    touch: sql(touchSql(`${q}api_tokens`)),
    delete: sql(`DELETE FROM ${q}api_tokens WHERE id = @id`),
  };
  const one = (list: ApiTokenRow[]) => (list[0] ? fromApiTokenRow(list[0]) : null);
  // Every API request starts with this lookup: the requests of one event-loop turn share one
  // statement (read-group.ts; issue 28), each still read after its request asked.
  const byDigest = createReadGroup<ApiTokenRow>(pool, s.byDigest, (row) => row.digest, setImmediate);
  return {
    insert: async (record) => (await changed(pool, s.insert, toApiTokenRow(record))) === 1,
    get: async (id) => one(await rowsOf<ApiTokenRow>(pool, s.byId, { id })),
    findByDigest: async (digest) => one(await byDigest(digest)),
    touch: async (id, at) => (await changed(pool, s.touch, { id, at })) === 1,
    delete: async (id) => (await changed(pool, s.delete, { id })) === 1,
  };
}
