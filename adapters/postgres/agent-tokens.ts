import type { AgentTokenStore } from "../../src/storage/types.js";
import { AGENT_TOKENS, fromAgentTokenRow as fromRow, toAgentTokenRow as toRow, type AgentTokenRow } from "../sql/rows.js";
import { columnList, insertIgnoreSql, touchSql } from "../sql/statements.js";
import type { PgPoolLike } from "./driver.js";
import { changed, rowsOf, sql } from "./driver.js";
import { pageFrom, pageOf, type PagedRow } from "./pages.js";
import { qualified } from "./sql.js";

const COLUMNS = columnList(AGENT_TOKENS);

export function createAgentTokenStore(pool: PgPoolLike, q: string): AgentTokenStore {
  const page = (direction: "ASC" | "DESC") =>
    sql(pageOf(`${q}agent_tokens`, COLUMNS, "agent_pool_id = @pool", `created_at ${direction}, id ${direction}`));
  const s = {
    // No conflict target: a taken id and a taken digest both refuse the insert.
    insert: sql(insertIgnoreSql(qualified(q, AGENT_TOKENS))),
    get: sql(`SELECT ${COLUMNS} FROM ${q}agent_tokens WHERE id = @id`),
    byDigest: sql(`SELECT ${COLUMNS} FROM ${q}agent_tokens WHERE digest = @digest`),
    pageAsc: page("ASC"),
    pageDesc: page("DESC"),
    touch: sql(touchSql(`${q}agent_tokens`)),
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
