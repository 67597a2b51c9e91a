import type { ApiTokenRecord } from "../../src/schemas/records.js";
import type { ApiTokenStore } from "../../src/storage/types.js";
import { API_TOKENS, fromApiTokenRow, toApiTokenRow, type ApiTokenRow } from "../sql/rows.js";
import { insertIgnoreSql, touchSql } from "../sql/statements.js";
import type { SqliteDatabase } from "./driver.js";
import { immediateTx } from "./driver.js";

export function createApiTokenStore(db: SqliteDatabase): ApiTokenStore {
  // ON CONFLICT DO NOTHING without a target covers both the id and the digest constraint.
  const insertRow = db.prepare(insertIgnoreSql(API_TOKENS));
  const byId = db.prepare(`SELECT * FROM api_tokens WHERE id = ?`);
  const byDigest = db.prepare(`SELECT * FROM api_tokens WHERE digest = ?`);
  const touchRow = db.prepare(touchSql("api_tokens"));
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
