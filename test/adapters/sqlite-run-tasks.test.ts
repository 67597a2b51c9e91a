import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { queryPlan, useTempSqliteFile } from "../helpers/sqlite-files.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { RUN_TASK_SQL } from "../../adapters/sqlite/run-tasks.js";
import { migrate, MIGRATIONS } from "../../adapters/sqlite/schema.js";
import { DEFAULT_GLOBAL_CONFIGURATION } from "../../src/schemas/run-task-records.js";
import { TASK_DELIVERY_SQL } from "../../adapters/sqlite/task-deliveries.js";
import { TASK_STAGE_SQL } from "../../adapters/sqlite/task-stages.js";
import { result, run, stage, started } from "../../src/testing/conformance/run-task-fixtures.js";

describe("sqlite adapter: run task tables", () => {
  const files = useTempSqliteFile("runplane-sqlite-rt-");
  const connect = (): Database.Database => files.connect();

  const plan = queryPlan;

  it("pages every list by walking an index, with no sort", () => {
    const db = connect();
    createSqliteStorage(db);
    const filter = { result: "taskrs-1", severity: null, status: null, limit: 20, offset: 0 };
    const cases: [string, string, unknown[]][] = [
      [RUN_TASK_SQL.taskPage, "run_tasks_by_organization", ["acme", 20, 0]],
      [RUN_TASK_SQL.wsPage, "workspace_tasks_by_workspace", ["ws-1", 20, 0]],
      [TASK_STAGE_SQL.stagesPage, "task_stages_by_run", ["run-1", 20, 0]],
      [TASK_STAGE_SQL.runsByWorkspace, "runs_by_workspace", ["ws-1", 20, 0]],
      [TASK_STAGE_SQL.resultsByStage, "task_results_by_stage", ["ts-1"]],
      [TASK_STAGE_SQL.outcomesByPosition, "task_result_outcomes_by_position", [filter]],
      [TASK_STAGE_SQL.outcomesBySeverity, "task_result_outcomes_by_severity", [filter]],
      [TASK_DELIVERY_SQL.byResult, "task_deliveries_by_result", [{ result: "taskrs-1" }]],
      // decision D24: the newest run of a plan or configuration version, read backwards off the index.
      [TASK_STAGE_SQL.runByPlan, "runs_by_plan", ["plan-1", 1]],
      [TASK_STAGE_SQL.runByConfiguration, "runs_by_configuration_version", ["cv-1", 1]],
    ];
    for (const [sql, index, params] of cases) {
      const detail = plan(db, sql, ...params);
      expect(detail, sql).toContain(index);
      expect(detail, sql).not.toContain("TEMP B-TREE");
    }
    expect(plan(db, TASK_STAGE_SQL.resultByToken, "digest")).toContain("task_results_by_token");
    const byTask = plan(db, RUN_TASK_SQL.wsByTask, "task-1");
    expect(byTask).toContain("workspace_tasks_by_task");
    expect(byTask).not.toContain("TEMP B-TREE");
  });

  it("gives tasks stored before the global-configuration step the disabled default", async () => {
    const db = connect();
    const step = MIGRATIONS.findIndex((m) => m.name.endsWith("-run-task-global-configuration"));
    migrate(db, MIGRATIONS.slice(0, step));
    db.prepare(
      `INSERT INTO run_tasks (id, organization, name, url, description, category, enabled, hmac_key, version, created_at, updated_at)
       VALUES ('task-old', 'acme', 'old', 'https://old.example', NULL, 'task', 1, NULL, 1, '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z')`,
    ).run();
    const storage = createSqliteStorage(db);
    expect((await storage.runTasks.get("task-old"))!.globalConfiguration).toStrictEqual(DEFAULT_GLOBAL_CONFIGURATION);
  });

  it("checks compare-and-set guards in the database, not in one connection's memory", async () => {
    const one = createSqliteStorage(connect());
    const two = createSqliteStorage(connect());
    await one.runs.create(run(), [stage()], [result()]);
    const expected = { statuses: ["pending"] as const, version: 1 };
    expect(await two.taskStages.transition(stage().id, expected, started(stage()))).not.toBeNull();
    expect(await one.taskStages.transition(stage().id, expected, { ...started(stage()), overrideComment: "late" })).toBeNull();
    expect(await one.taskStages.get(stage().id)).toStrictEqual(started(stage()));
    const next = { ...result(), status: "passed" as const, version: 2 };
    expect(await one.taskResults.transition(result().id, { statuses: ["pending", "running"], version: 1 }, next)).not.toBeNull();
    expect(await two.taskResults.transition(result().id, { statuses: ["pending", "running"], version: 1 }, { ...next, status: "failed" })).toBeNull();
    expect(await two.runs.create(run(), [], [])).toBe(false);
  });
});
