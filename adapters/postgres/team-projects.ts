import type { AccessLevel, ProjectAccess, TeamProjectRecord, WorkspaceAccess } from "../../src/schemas/team-projects.js";
import type { GuardedResult, TeamProjectListFilter, TeamProjectStore } from "../../src/storage/types.js";
import type { PgPoolLike } from "./driver.js";
import { changed, isViolation, rowsOf, sql } from "./driver.js";
import { pageFrom, pageOf, type PagedRow } from "./pages.js";

interface TeamProjectRow {
  id: string;
  team_id: string;
  project_id: string;
  organization: string;
  access: string;
  project_access: string;
  workspace_access: string;
  created_at: string;
  updated_at: string;
}

const toRow = (r: TeamProjectRecord): TeamProjectRow => ({
  id: r.id,
  team_id: r.teamId,
  project_id: r.projectId,
  organization: r.organization,
  access: r.access,
  project_access: JSON.stringify(r.projectAccess),
  workspace_access: JSON.stringify(r.workspaceAccess),
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

// Enum values are cast, not checked: the core validated them before they were stored.
const fromRow = (row: TeamProjectRow): TeamProjectRecord => ({
  id: row.id,
  teamId: row.team_id,
  projectId: row.project_id,
  organization: row.organization,
  access: row.access as AccessLevel,
  projectAccess: JSON.parse(row.project_access) as ProjectAccess,
  workspaceAccess: JSON.parse(row.workspace_access) as WorkspaceAccess,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const COLUMNS = "id, team_id, project_id, organization, access, project_access, workspace_access, created_at, updated_at";

// `@all_teams` true ignores the team list; `@team` null ignores the single team.
const FILTER = `project_id = @project_id AND (@all_teams::boolean OR team_id = ANY(@teams::text[]))
  AND (@team::text IS NULL OR team_id = @team::text)`;

/** The identity columns must still be the row's, so a record naming another pair is `missing`. */
const IDENTITY = `id = @id AND team_id = @team_id AND project_id = @project_id AND organization = @organization`;

type UpdateResult = GuardedResult<"missing" | "stale">;

export function createTeamProjectStore(pool: PgPoolLike, q: string): TeamProjectStore {
  const table = `${q}team_projects`;
  const s = {
    insert: sql(`INSERT INTO ${table} (${COLUMNS}) VALUES (@id, @team_id, @project_id, @organization, @access,
      @project_access, @workspace_access, @created_at, @updated_at)`),
    get: sql(`SELECT ${COLUMNS} FROM ${table} WHERE id = @id`),
    page: sql(pageOf(table, COLUMNS, FILTER, "created_at, id")),
    forTeams: sql(`SELECT ${COLUMNS} FROM ${table} WHERE project_id = @project_id AND team_id = ANY(@teams::text[])
      ORDER BY created_at, id`),
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
      return (await rowsOf<TeamProjectRow>(pool, s.forTeams, { project_id: projectId, teams: teamIds })).map(fromRow);
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
