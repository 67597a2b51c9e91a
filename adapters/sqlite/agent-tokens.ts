import type { AgentTokenRecord, Page, PageRequest } from "../../src/schemas/records.js";
import type { AgentTokenOrder, AgentTokenStore } from "../../src/storage/types.js";
import { AGENT_TOKENS, fromAgentTokenRow as fromRow, toAgentTokenRow as toRow, type AgentTokenRow } from "../sql/rows.js";
import { insertIgnoreSql, touchSql } from "../sql/statements.js";
import type { SqliteDatabase } from "./driver.js";
import { deferredTx, immediateTx } from "./driver.js";

/** The statements, exported so the adapter tests can check their query plans. */
export const AGENT_TOKEN_SQL = {
  // ON CONFLICT DO NOTHING without a target covers both the id and the digest constraint.
  insert: insertIgnoreSql(AGENT_TOKENS),
  get: `SELECT * FROM agent_tokens WHERE id = ?`,
  byDigest: `SELECT * FROM agent_tokens WHERE digest = ?`,
  // Both orders walk agent_tokens_by_pool, forwards or backwards: no sort step.
  pageAsc: `SELECT * FROM agent_tokens WHERE agent_pool_id = ? ORDER BY created_at ASC, id ASC LIMIT ? OFFSET ?`,
  pageDesc: `SELECT * FROM agent_tokens WHERE agent_pool_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
  count: `SELECT COUNT(*) AS total FROM agent_tokens WHERE agent_pool_id = ?`,
  touch: touchSql("agent_tokens"),
  delete: `DELETE FROM agent_tokens WHERE id = ?`,
} as const;

export function createAgentTokenStore(db: SqliteDatabase): AgentTokenStore {
  const s = Object.fromEntries(
    Object.entries(AGENT_TOKEN_SQL).map(([name, sql]) => [name, db.prepare(sql)]),
  ) as Record<keyof typeof AGENT_TOKEN_SQL, ReturnType<SqliteDatabase["prepare"]>>;
  const one = (row: unknown): AgentTokenRecord | null => (row ? fromRow(row as AgentTokenRow) : null);

  const insert = immediateTx(db, (record: AgentTokenRecord) => s.insert.run(toRow(record)).changes === 1);
  const touch = immediateTx(db, (id: string, at: string) => s.touch.run({ id, at }).changes === 1);
  const remove = immediateTx(db, (id: string) => s.delete.run(id).changes === 1);
  // One read transaction, so the page and its total see the same snapshot.
  const page = deferredTx(db, (agentPoolId: string, request: PageRequest, order: AgentTokenOrder): Page<AgentTokenRecord> => {
    const statement = order === "desc" ? s.pageDesc : s.pageAsc;
    return {
      items: (statement.all(agentPoolId, request.limit, request.offset) as AgentTokenRow[]).map(fromRow),
      total: (s.count.get(agentPoolId) as { total: number }).total,
    };
  });

  return {
    insert: async (record) => insert(record),
    get: async (id) => one(s.get.get(id)),
    listByPool: async (agentPoolId, request, order) => page(agentPoolId, request, order),
    findByDigest: async (digest) => one(s.byDigest.get(digest)),
    touch: async (id, at) => touch(id, at),
    delete: async (id) => remove(id),
  };
}
