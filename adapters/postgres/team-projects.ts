import type { GuardedResult, TeamProjectListFilter, TeamProjectStore } from "../../src/storage/types.js";
import { fromTeamProjectRow as fromRow, TEAM_PROJECTS, toTeamProjectRow as toRow, type TeamProjectRow } from "../sql/rows.js";
import { columnList, insertSql } from "../sql/statements.js";
import type { PgPoolLike } from "./driver.js";
import { changed, isViolation, rowsOf, sql } from "./driver.js";
import { createReadGroup } from "./read-group.js";
import { pageFrom, pageOf, type PagedRow } from "./pages.js";
import { qualified } from "./sql.js";

const COLUMNS = columnList(TEAM_PROJECTS);

// `@all_teams` true ignores the team list; `@team` null ignores the single team.
const FILTER = `project_id = @project_id AND (@all_teams::boolean OR team_id = ANY(@teams::text[]))
  AND (@team::text IS NULL OR team_id = @team::text)`;

/** The identity columns must still be the row's, so a record naming another pair is `missing`. */
const IDENTITY = `id = @id AND team_id = @team_id AND project_id = @project_id AND organization = @organization`;

type UpdateResult = GuardedResult<"missing" | "stale">;

export function createTeamProjectStore(pool: PgPoolLike, q: string): TeamProjectStore {
  const table = `${q}team_projects`;
  const s = {
    insert: sql(insertSql(qualified(q, TEAM_PROJECTS))),
    get: sql(`SELECT ${COLUMNS} FROM ${table} WHERE id = @id`),
    page: sql(pageOf(table, COLUMNS, FILTER, "created_at, id")),
    // Each key is the JSON [projectId, teamIds] of one call: every authorization of one turn in one statement.
    forTeams: sql(`SELECT k.key, ${columnList(TEAM_PROJECTS, "t")} FROM unnest(@keys::text[]) AS k(key)
      JOIN ${table} t ON t.project_id = (k.key::json ->> 0)
        AND t.team_id IN (SELECT json_array_elements_text(k.key::json -> 1))
      ORDER BY t.created_at, t.id`),
    // Compare-and-set on the version, with its diagnosis read from the same snapshot.
    update: sql(`WITH updated AS (
        UPDATE ${table} SET access = @access, project_access = @project_access, workspace_access = @workspace_access,
          updated_at = @updated_at
        WHERE ${IDENTITY} AND updated_at = @expected_updated_at RETURNING 1)
      SELECT EXISTS (SELECT 1 FROM updated) AS updated, EXISTS (SELECT 1 FROM ${table} WHERE ${IDENTITY}) AS found`),
    delete: sql(`DELETE FROM ${table} WHERE id = @id`),
    deleteByTeam: sql(`DELETE FROM ${table} WHERE team_id = @team_id`),
    deleteByProject: sql(`DELETE FROM ${table} WHERE project_id = @project_id`),
  };

  // The grants checked by every authorization of a project action: grouped per turn.
  const forTeams = createReadGroup<TeamProjectRow & { key: string }>(pool, s.forTeams, (row) => row.key, setImmediate);

  const filterParams = (projectId: string, filter: TeamProjectListFilter) => ({
    project_id: projectId,
    all_teams: filter.teamIds === undefined,
    teams: filter.teamIds ?? [],
    team: filter.teamId ?? null,
  });

  return {
    async insert(record) {
      try {
        await changed(pool, s.insert, toRow(record));
        return { ok: true };
      } catch (error) {
        // The pair's unique index is the guard; a reused id (the primary key) propagates.
        if (isViolation(error, "team_projects_unique_pair")) return { ok: false, reason: "duplicate" };
        throw error;
      }
    },
    async get(id) {
      const [row] = await rowsOf<TeamProjectRow>(pool, s.get, { id });
      return row ? fromRow(row) : null;
    },
    async listByProject(projectId, filter, request) {
      const rows = await rowsOf<PagedRow<TeamProjectRow>>(pool, s.page, { ...filterParams(projectId, filter), ...request });
      return pageFrom(rows, fromRow);
    },
    async listForTeams(projectId, teamIds) {
      if (teamIds.length === 0) return [];
      return (await forTeams(JSON.stringify([projectId, teamIds]))).map(fromRow);
    },
    async update(record, expectedUpdatedAt): Promise<UpdateResult> {
      const params = { ...toRow(record), expected_updated_at: expectedUpdatedAt };
      const [row] = await rowsOf<{ updated: boolean; found: boolean }>(pool, s.update, params);
      if (row?.updated) return { ok: true };
      return { ok: false, reason: row?.found ? "stale" : "missing" };
    },
    delete: async (id) => (await changed(pool, s.delete, { id })) === 1,
    deleteByTeam: async (teamId) => changed(pool, s.deleteByTeam, { team_id: teamId }),
    deleteByProject: async (projectId) => changed(pool, s.deleteByProject, { project_id: projectId }),
  };
}
