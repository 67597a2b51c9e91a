import type { AgentRecord, AgentStatus } from "../../src/schemas/agents.js";
import type { Page, PageRequest } from "../../src/schemas/records.js";
import type { AgentListFilter, AgentStore } from "../../src/storage/agents-types.js";
import { agentPingSql, agentPoolFilter, AGENTS, fromAgentRow, toAgentRow, type AgentRow } from "../sql/agent-rows.js";
import { insertIgnoreSql } from "../sql/statements.js";
import type { SqliteDatabase } from "./driver.js";
import { deferredTx, immediateTx } from "./driver.js";
import type { Migration } from "./migration.js";

/**
 * Decision D34: a run task may name an agent pool, its results keep the pool they were delivered
 * through, and a pool's agents are recorded with their status and latest report.
 */
export const AGENTS_MIGRATION: Migration = {
  name: "0016-agents",
  up: `
    ALTER TABLE run_tasks ADD COLUMN agent_pool_id TEXT;
    -- Deleting a pool asks whether a task still names it.
    CREATE INDEX run_tasks_by_agent_pool ON run_tasks (agent_pool_id) WHERE agent_pool_id IS NOT NULL;
    ALTER TABLE task_results ADD COLUMN agent_pool_id TEXT;
    CREATE TABLE agents (
      id TEXT PRIMARY KEY NOT NULL,
      agent_pool_id TEXT NOT NULL,
      token_id TEXT NOT NULL,
      name TEXT,
      status TEXT NOT NULL,
      ip_address TEXT NOT NULL,
      last_ping_at TEXT NOT NULL,
      created_at TEXT NOT NULL
    ) STRICT;
    -- decision D7: list pages walk this index in order.
    CREATE INDEX agents_by_pool ON agents (agent_pool_id, created_at, id);
  `,
};

/** The statements, exported so the adapter tests can check their query plans. */
export const AGENT_SQL = {
  insert: insertIgnoreSql(AGENTS),
  get: `SELECT * FROM agents WHERE id = ?`,
  page: `SELECT * FROM agents WHERE ${agentPoolFilter("@since")} ORDER BY created_at, id LIMIT @limit OFFSET @offset`,
  count: `SELECT COUNT(*) AS total FROM agents WHERE ${agentPoolFilter("@since")}`,
  ping: agentPingSql("agents"),
  setStatus: `UPDATE agents SET status = @status WHERE id = @id AND status IN (SELECT value FROM json_each(@expected))`,
  // decision D46: the table is bounded per pool (caps), so the prune's scan stays small.
  delete: `DELETE FROM agents WHERE id = ?`,
  prune: `DELETE FROM agents WHERE id IN (SELECT id FROM agents WHERE last_ping_at < @before ORDER BY last_ping_at, id LIMIT @limit)`,
} as const;

export function createAgentStore(db: SqliteDatabase): AgentStore {
  const s = Object.fromEntries(Object.entries(AGENT_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Record<
    keyof typeof AGENT_SQL,
    ReturnType<SqliteDatabase["prepare"]>
  >;
  const one = (row: unknown): AgentRecord | null => (row ? fromAgentRow(row as AgentRow) : null);

  const insert = immediateTx(db, (record: AgentRecord) => s.insert.run(toAgentRow(record)).changes === 1);
  // The write and the read that answers it share one transaction: the answer is what the write left.
  const ping = immediateTx(db, (id: string, at: string, status: AgentStatus) => {
    s.ping.run({ id, at, status });
    return one(s.get.get(id));
  });
  const setStatus = immediateTx(db, (id: string, expected: readonly AgentStatus[], status: AgentStatus) =>
    s.setStatus.run({ id, status, expected: JSON.stringify(expected) }).changes === 1 ? one(s.get.get(id)) : null,
  );
  const remove = immediateTx(db, (id: string) => s.delete.run(id).changes === 1);
  const prune = immediateTx(db, (before: string, limit: number) => s.prune.run({ before, limit }).changes);
  // One read transaction, so the page and its total see the same snapshot.
  const page = deferredTx(db, (agentPoolId: string, filter: AgentListFilter, request: PageRequest): Page<AgentRecord> => {
    const params = { pool: agentPoolId, since: filter.lastPingSince ?? null };
    return {
      items: (s.page.all({ ...params, limit: request.limit, offset: request.offset }) as AgentRow[]).map(fromAgentRow),
      total: (s.count.get(params) as { total: number }).total,
    };
  });

  return {
    insert: async (record) => insert(record),
    get: async (id) => one(s.get.get(id)),
    listByPool: async (agentPoolId, filter, request) => page(agentPoolId, filter, request),
    ping: async (id, at, status) => ping(id, at, status),
    setStatus: async (id, expected, status) => setStatus(id, expected, status),
    delete: async (id) => remove(id),
    prune: async (before, limit) => prune(before, limit),
  };
}
