import type { AgentRecord, AgentStatus } from "../../src/schemas/agents.js";
import type { TableColumns } from "./statements.js";

/** The `agents` table (decision D34), shared by the SQLite and PostgreSQL adapters. */
export interface AgentRow {
  id: string;
  agent_pool_id: string;
  token_id: string;
  name: string | null;
  status: string;
  ip_address: string;
  last_ping_at: string;
  created_at: string;
}
export const AGENTS: TableColumns<AgentRow> = {
  table: "agents",
  columns: ["id", "agent_pool_id", "token_id", "name", "status", "ip_address", "last_ping_at", "created_at"],
};
export const toAgentRow = (r: AgentRecord): AgentRow => ({
  id: r.id,
  agent_pool_id: r.agentPoolId,
  token_id: r.tokenId,
  name: r.name,
  status: r.status,
  ip_address: r.ipAddress,
  last_ping_at: r.lastPingAt,
  created_at: r.createdAt,
});
export const fromAgentRow = (row: AgentRow): AgentRecord => ({
  id: row.id,
  agentPoolId: row.agent_pool_id,
  tokenId: row.token_id,
  name: row.name,
  status: row.status as AgentStatus,
  ipAddress: row.ip_address,
  lastPingAt: row.last_ping_at,
  createdAt: row.created_at,
});

/**
 * The filter of `AgentStore.listByPool` over `table` (`@pool`, `@since`: null for no filter).
 * `agents_by_pool` serves the pool and the order; the ping time is checked on the pool's rows.
 */
export const agentPoolFilter = (since: string): string => `agent_pool_id = @pool AND (${since} IS NULL OR last_ping_at >= ${since})`;

/**
 * `AgentStore.ping` in one statement for both databases: a report no older than the stored one
 * sets the ping time and the status; an older one matches no row.
 */
export const agentPingSql = (table: string): string =>
  `UPDATE ${table} SET last_ping_at = @at, status = @status WHERE id = @id AND last_ping_at <= @at`;
