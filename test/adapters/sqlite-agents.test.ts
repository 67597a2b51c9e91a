import { describe, expect, it } from "vitest";
import { queryPlan, useTempSqliteFile } from "../helpers/sqlite-files.js";
import { AGENT_SQL } from "../../adapters/sqlite/agents.js";
import { RUN_TASK_SQL } from "../../adapters/sqlite/run-tasks.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";

describe("sqlite agents (D34)", () => {
  const files = useTempSqliteFile("runplane-agents-");

  it("pages a pool's agents by walking the pool index, with no sort step, filter or not", () => {
    const db = files.connect();
    createSqliteStorage(db);
    for (const since of [null, "2026-01-01T00:00:00.000Z"]) {
      const page = queryPlan(db, AGENT_SQL.page, { pool: "apool-1", since, limit: 20, offset: 0 });
      expect(page).toContain("USING INDEX agents_by_pool");
      expect(page).not.toContain("TEMP B-TREE");
      expect(queryPlan(db, AGENT_SQL.count, { pool: "apool-1", since })).toMatch(/USING (COVERING )?INDEX agents_by_pool/);
    }
  });

  it("counts the tasks naming a pool through the partial pool index", () => {
    const db = files.connect();
    createSqliteStorage(db);
    expect(queryPlan(db, RUN_TASK_SQL.taskCountByPool, "apool-1")).toMatch(/USING (COVERING )?INDEX run_tasks_by_agent_pool/);
  });
});
