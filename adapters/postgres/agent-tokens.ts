import type { AgentTokenCreatorType, AgentTokenRecord } from "../../src/schemas/records.js";
import type { AgentTokenStore } from "../../src/storage/types.js";
import type { PgPoolLike } from "./driver.js";
import { changed, rowsOf, sql } from "./driver.js";
import { pageFrom, pageOf, type PagedRow } from "./pages.js";

interface AgentTokenRow {
  id: string;
  agent_pool_id: string;
  organization: string;
  description: string;
  digest: string;
  created_at: string;
  last_used_at: string | null;
  created_by_type: string;
  created_by_id: string;
}

const toRow = (r: AgentTokenRecord): AgentTokenRow => ({
  id: r.id,
  agent_pool_id: r.agentPoolId,
  organization: r.organization,
  description: r.description,
  digest: r.digest,
  created_at: r.createdAt,
  last_used_at: r.lastUsedAt ?? null,
  created_by_type: r.createdByType,
  created_by_id: r.createdById,
});

const fromRow = (row: AgentTokenRow): AgentTokenRecord => ({
  id: row.id,
  agentPoolId: row.agent_pool_id,
  organization: row.organization,
  description: row.description,
  digest: row.digest,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  createdByType: row.created_by_type as AgentTokenCreatorType,
  createdById: row.created_by_id,
});

const COLUMNS = "id, agent_pool_id, organization, description, digest, created_at, last_used_at, created_by_type, created_by_id";

export function createAgentTokenStore(pool: PgPoolLike, q: string): AgentTokenStore {
  const page = (direction: "ASC" | "DESC") =>
    sql(pageOf(`${q}agent_tokens`, COLUMNS, "agent_pool_id = @pool", `created_at ${direction}, id ${direction}`));
  const s = {
    // No conflict target: a taken id and a taken digest both refuse the insert.
    insert: sql(`INSERT INTO ${q}agent_tokens (${COLUMNS})
      VALUES (@id, @agent_pool_id, @organization, @description, @digest, @created_at, @last_used_at,
        @created_by_type, @created_by_id)
      ON CONFLICT DO NOTHING`),
    get: sql(`SELECT ${COLUMNS} FROM ${q}agent_tokens WHERE id = @id`),
    byDigest: sql(`SELECT ${COLUMNS} FROM ${q}agent_tokens WHERE digest = @digest`),
    pageAsc: page("ASC"),
    pageDesc: page("DESC"),
    // Monotonic: a later instant already stored is kept (GREATEST ignores the NULL of a first use).
    touch: sql(`UPDATE ${q}agent_tokens SET last_used_at = GREATEST(last_used_at, @at::text COLLATE "C") WHERE id = @id`),
    delete: sql(`DELETE FROM ${q}agent_tokens WHERE id = @id`),
  };
  const one = (list: AgentTokenRow[]) => (list[0] ? fromRow(list[0]) : null);

  return {
    insert: async (record) => (await changed(pool, s.insert, toRow(record))) === 1,
    get: async (id) => one(await rowsOf<AgentTokenRow>(pool, s.get, { id })),
    async listByPool(agentPoolId, request, order) {
      const statement = order === "desc" ? s.pageDesc : s.pageAsc;
      return pageFrom(await rowsOf<PagedRow<AgentTokenRow>>(pool, statement, { pool: agentPoolId, ...request }), fromRow);
    },
    findByDigest: async (digest) => one(await rowsOf<AgentTokenRow>(pool, s.byDigest, { digest })),
    touch: async (id, at) => (await changed(pool, s.touch, { id, at })) === 1,
    delete: async (id) => (await changed(pool, s.delete, { id })) === 1,
  };
}
