import type { AgentStatus } from "../../src/schemas/agents.js";
import type { AgentStore } from "../../src/storage/agents-types.js";
import { agentPingSql, agentPoolFilter, AGENTS, fromAgentRow, toAgentRow, type AgentRow } from "../sql/agent-rows.js";
import { columnList, insertIgnoreSql } from "../sql/statements.js";
import type { PgPoolLike } from "./driver.js";
import { changed, rowsOf, sql } from "./driver.js";
import type { PgMigration } from "./migration.js";
import { pageFrom, pageOf, type PagedRow } from "./pages.js";
import { qualified, TEXT } from "./sql.js";

/**
 * Decision D34: a run task may name an agent pool, its results keep the pool they were delivered
 * through, and a pool's agents are recorded with their status and latest report.
 */
export const AGENTS_MIGRATION: PgMigration = {
  name: "0013-agents",
  up: (q) => `
    ALTER TABLE ${q}run_tasks ADD COLUMN agent_pool_id ${TEXT};
    -- Deleting a pool asks whether a task still names it.
    CREATE INDEX run_tasks_by_agent_pool ON ${q}run_tasks (agent_pool_id) WHERE agent_pool_id IS NOT NULL;
    ALTER TABLE ${q}task_results ADD COLUMN agent_pool_id ${TEXT};
    CREATE TABLE ${q}agents (
      id ${TEXT} PRIMARY KEY, agent_pool_id ${TEXT} NOT NULL, token_id ${TEXT} NOT NULL, name ${TEXT},
      status ${TEXT} NOT NULL, ip_address ${TEXT} NOT NULL, last_ping_at ${TEXT} NOT NULL, created_at ${TEXT} NOT NULL);
    -- decision D7: list pages walk this index in order.
    CREATE INDEX agents_by_pool ON ${q}agents (agent_pool_id, created_at, id);
  `,
};

const COLUMNS = columnList(AGENTS);

export function createAgentStore(pool: PgPoolLike, q: string): AgentStore {
  const table = `${q}agents`;
  const s = {
    insert: sql(insertIgnoreSql(qualified(q, AGENTS))),
    get: sql(`SELECT ${COLUMNS} FROM ${table} WHERE id = @id`),
    page: sql(pageOf(table, COLUMNS, agentPoolFilter("@since::text"), "created_at, id")),
    ping: sql(`${agentPingSql(table)} RETURNING ${COLUMNS}`),
    setStatus: sql(`UPDATE ${table} SET status = @status WHERE id = @id AND status = ANY(@expected::text[]) RETURNING ${COLUMNS}`),
    // decision D46: the table is bounded per pool (caps), so the prune's scan stays small.
    delete: sql(`DELETE FROM ${table} WHERE id = @id`),
    prune: sql(`DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE last_ping_at < @before ORDER BY last_ping_at, id LIMIT @limit)`),
  };
  const one = (list: AgentRow[]) => (list[0] ? fromAgentRow(list[0]) : null);
  const get = async (id: string) => one(await rowsOf<AgentRow>(pool, s.get, { id }));

  return {
    insert: async (record) => (await changed(pool, s.insert, toAgentRow(record))) === 1,
    get,
    async listByPool(agentPoolId, filter, request) {
      const params = { pool: agentPoolId, since: filter.lastPingSince ?? null, ...request };
      return pageFrom(await rowsOf<PagedRow<AgentRow>>(pool, s.page, params), fromAgentRow);
    },
    // An older report matches no row: the stored agent, as it is, answers it.
    ping: async (id, at, status: AgentStatus) => one(await rowsOf<AgentRow>(pool, s.ping, { id, at, status })) ?? get(id),
    setStatus: async (id, expected, status) => one(await rowsOf<AgentRow>(pool, s.setStatus, { id, status, expected: [...expected] })),
    delete: async (id) => (await changed(pool, s.delete, { id })) === 1,
    prune: async (before, limit) => changed(pool, s.prune, { before, limit }),
  };
}
