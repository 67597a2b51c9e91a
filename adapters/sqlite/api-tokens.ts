import type { ApiTokenRecord } from "../../src/schemas/records.js";
import type { ApiTokenStore } from "../../src/storage/types.js";
import type { SqliteDatabase } from "./driver.js";
import { immediateTx } from "./driver.js";
import { fromApiTokenRow, toApiTokenRow, type ApiTokenRow } from "./rows.js";

export function createApiTokenStore(db: SqliteDatabase): ApiTokenStore {
  // ON CONFLICT DO NOTHING without a target covers both the id and the digest constraint.
  const insertRow = db.prepare(
    `INSERT INTO api_tokens (id, digest, organization, kind, user_id, team_id, description, created_at, last_used_at)
     VALUES (@id, @digest, @organization, @kind, @user_id, @team_id, @description, @created_at, @last_used_at)
     ON CONFLICT DO NOTHING`,
  );
  const byId = db.prepare(`SELECT * FROM api_tokens WHERE id = ?`);
  const byDigest = db.prepare(`SELECT * FROM api_tokens WHERE digest = ?`);
  // Monotonic, like agent tokens: a later instant already stored is kept.
  const touchRow = db.prepare(
    `UPDATE api_tokens SET last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < @at THEN @at ELSE last_used_at END WHERE id = @id`,
  );
  const deleteRow = db.prepare(`DELETE FROM api_tokens WHERE id = ?`);

  const insert = immediateTx(db, (record: ApiTokenRecord) => insertRow.run(toApiTokenRow(record)).changes === 1);
  const touch = immediateTx(db, (id: string, at: string) => touchRow.run({ id, at }).changes === 1);
  const remove = immediateTx(db, (id: string) => deleteRow.run(id).changes === 1);
  const one = (row: unknown): ApiTokenRecord | null => (row ? fromApiTokenRow(row as ApiTokenRow) : null);

  return {
    insert: async (record) => insert(record),
    get: async (id) => one(byId.get(id)),
    findByDigest: async (digest) => one(byDigest.get(digest)),
    touch: async (id, at) => touch(id, at),
    delete: async (id) => remove(id),
  };
}
