import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { queryPlan, useTempSqliteFile } from "../helpers/sqlite-files.js";
import { AGENT_TOKEN_SQL } from "../../adapters/sqlite/agent-tokens.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import type { AgentTokenRecord } from "../../src/schemas/records.js";

const record = (overrides: Partial<AgentTokenRecord> = {}): AgentTokenRecord => ({
  id: "at-0000000000000001",
  agentPoolId: "apool-1",
  organization: "acme",
  description: "d",
  digest: "a".repeat(64),
  createdAt: "2026-01-01T00:00:00.000Z",
  lastUsedAt: null,
  createdByType: "users",
  createdById: "user-1",
  ...overrides,
});

describe("sqlite agent tokens", () => {
  const files = useTempSqliteFile("runplane-agent-tokens-");
  const connect = (): Database.Database => files.connect();


  const plan = queryPlan;

  it("pages both sort orders by walking the pool index, with no sort step", () => {
    const db = connect();
    createSqliteStorage(db);
    for (const sql of [AGENT_TOKEN_SQL.pageAsc, AGENT_TOKEN_SQL.pageDesc]) {
      const page = plan(db, sql, "apool-1", 20, 0);
      expect(page).toContain("USING INDEX agent_tokens_by_pool");
      expect(page).not.toContain("TEMP B-TREE");
    }
    expect(plan(db, AGENT_TOKEN_SQL.count, "apool-1")).toMatch(/USING (COVERING )?INDEX agent_tokens_by_pool/);
  });

  it("finds a token by digest through the unique digest index", () => {
    const db = connect();
    createSqliteStorage(db);
    expect(plan(db, AGENT_TOKEN_SQL.byDigest, "a".repeat(64))).toContain("agent_tokens_by_digest");
  });

  it("checks uniqueness and deletes in the database, not in one connection's memory", async () => {
    const one = createSqliteStorage(connect());
    const two = createSqliteStorage(connect());
    expect(await one.agentTokens.insert(record())).toBe(true);
    expect(await two.agentTokens.insert(record({ id: "at-0000000000000002" }))).toBe(false);
    expect(await two.agentTokens.touch(record().id, "2026-01-01T00:01:00.000Z")).toBe(true);
    expect(await one.agentTokens.touch(record().id, "2026-01-01T00:00:30.000Z")).toBe(true);
    expect((await one.agentTokens.get(record().id))?.lastUsedAt).toBe("2026-01-01T00:01:00.000Z");
    expect(await two.agentTokens.delete(record().id)).toBe(true);
    expect(await one.agentTokens.delete(record().id)).toBe(false);
    expect(await one.agentTokens.findByDigest(record().digest)).toBeNull();
  });
});
