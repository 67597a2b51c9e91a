import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { queryPlan, useTempSqliteFile } from "../helpers/sqlite-files.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";
import { TEAM_PROJECT_SQL } from "../../adapters/sqlite/team-projects.js";
import { teamProject } from "../../src/testing/conformance/team-projects.cases.js";

describe("sqlite team-projects", () => {
  const files = useTempSqliteFile("runplane-tp-");
  const connect = (): Database.Database => files.connect();
  const plan = queryPlan;


  it("pages a project's grants by walking the project index, with no sort, filtered or not", () => {
    const db = connect();
    createSqliteStorage(db);
    for (const filter of [
      { all_teams: 1, teams: "[]", team: null },
      { all_teams: 0, teams: '["team-1","team-2"]', team: null },
      { all_teams: 1, teams: "[]", team: "team-1" },
    ]) {
      const params = { project_id: "prj-1", ...filter, limit: 20, offset: 0 };
      const page = plan(db, TEAM_PROJECT_SQL.page, params);
      expect(page).toMatch(/team_projects_by_project|team_projects_unique_pair/);
      expect(page).not.toContain("TEMP B-TREE");
      expect(plan(db, TEAM_PROJECT_SQL.count, { project_id: "prj-1", ...filter })).toMatch(/USING (COVERING )?INDEX/);
    }
  });

  it("reads one principal's grants through the (team, project) index", () => {
    const db = connect();
    createSqliteStorage(db);
    const forTeams = (db.prepare(`EXPLAIN QUERY PLAN ${TEAM_PROJECT_SQL.forTeams}`).all("prj-1", '["team-1"]') as { detail: string }[])
      .map((r) => r.detail)
      .join(" | ");
    expect(forTeams).toMatch(/USING INDEX team_projects_(unique_pair|by_project)/);
    expect(forTeams).not.toMatch(/SCAN team_projects\b(?! USING)/);
  });

  it("checks the pair guard and the version in the database, not in one connection", async () => {
    const one = createSqliteStorage(connect());
    const two = createSqliteStorage(connect());
    const a = teamProject();
    expect(await one.teamProjects.insert(a)).toStrictEqual({ ok: true });
    expect(await two.teamProjects.insert({ ...a, id: "tprj-other" })).toStrictEqual({ ok: false, reason: "duplicate" });
    const next = { ...a, access: "admin" as const, updatedAt: "2030-01-01T00:00:00.000Z" };
    expect(await two.teamProjects.update(next, a.updatedAt)).toStrictEqual({ ok: true });
    expect(await one.teamProjects.update({ ...next, access: "read" }, a.updatedAt)).toStrictEqual({ ok: false, reason: "stale" });
    expect(await one.teamProjects.get(a.id)).toStrictEqual(next);
  });
});
