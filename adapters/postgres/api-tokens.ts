import type { ApiTokenStore } from "../../src/storage/types.js";
import { fromApiTokenRow, toApiTokenRow, type ApiTokenRow } from "../sqlite/rows.js";
import type { PgPoolLike } from "./driver.js";
import { changed, rowsOf, sql } from "./driver.js";

const COLUMNS = "id, digest, organization, kind, user_id, team_id, description, created_at, last_used_at";

export function createApiTokenStore(pool: PgPoolLike, q: string): ApiTokenStore {
  const s = {
    // No conflict target: a taken id and a taken digest both refuse the insert.
    insert: sql(`INSERT INTO ${q}api_tokens (${COLUMNS})
      VALUES (@id, @digest, @organization, @kind, @user_id, @team_id, @description, @created_at, @last_used_at)
      ON CONFLICT DO NOTHING`),
    byId: sql(`SELECT ${COLUMNS} FROM ${q}api_tokens WHERE id = @id`),
    byDigest: sql(`SELECT ${COLUMNS} FROM ${q}api_tokens WHERE digest = @digest`),
    // Monotonic: a later instant already stored is kept (GREATEST ignores the NULL of a first use).
    touch: sql(`UPDATE ${q}api_tokens SET last_used_at = GREATEST(last_used_at, @at::text COLLATE "C") WHERE id = @id`),
    delete: sql(`DELETE FROM ${q}api_tokens WHERE id = @id`),
  };
  const one = (list: ApiTokenRow[]) => (list[0] ? fromApiTokenRow(list[0]) : null);
  return {
    insert: async (record) => (await changed(pool, s.insert, toApiTokenRow(record))) === 1,
    get: async (id) => one(await rowsOf<ApiTokenRow>(pool, s.byId, { id })),
    findByDigest: async (digest) => one(await rowsOf<ApiTokenRow>(pool, s.byDigest, { digest })),
    touch: async (id, at) => (await changed(pool, s.touch, { id, at })) === 1,
    delete: async (id) => (await changed(pool, s.delete, { id })) === 1,
  };
}
