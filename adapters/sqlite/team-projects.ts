import type { Page, PageRequest } from "../../src/schemas/records.js";
import type { TeamProjectRecord } from "../../src/schemas/team-projects.js";
import type { GuardedResult, TeamProjectListFilter, TeamProjectStore } from "../../src/storage/types.js";
import { fromTeamProjectRow as fromRow, TEAM_PROJECTS, toTeamProjectRow as toRow, type TeamProjectRow } from "../sql/rows.js";
import { insertSql } from "../sql/statements.js";
import type { SqliteDatabase, SqliteStatement } from "./driver.js";
import { deferredTx, immediateTx, isUniqueViolation } from "./driver.js";

// Filters bind as parameters: `@all_teams` 1 ignores the team list, `@teams` is a JSON array of ids
// (json_each keeps the statement fixed whatever the number of teams), `@team` null ignores it.
const FILTER = `project_id = @project_id
  AND (@all_teams = 1 OR team_id IN (SELECT value FROM json_each(@teams)))
  AND (@team IS NULL OR team_id = @team)`;

/** The statements, exported so the adapter tests can check their query plans. */
export const TEAM_PROJECT_SQL = {
  insert: insertSql(TEAM_PROJECTS),
  get: `SELECT * FROM team_projects WHERE id = ?`,
  page: `SELECT * FROM team_projects WHERE ${FILTER} ORDER BY created_at, id LIMIT @limit OFFSET @offset`,
  count: `SELECT COUNT(*) AS total FROM team_projects WHERE ${FILTER}`,
  forTeams: `SELECT * FROM team_projects
    WHERE project_id = ? AND team_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id`,
  // Compare-and-set on the version; team, project and organization must still be the row's.
  update: `UPDATE team_projects SET access = @access, project_access = @project_access,
      workspace_access = @workspace_access, updated_at = @updated_at
    WHERE id = @id AND team_id = @team_id AND project_id = @project_id AND organization = @organization
      AND updated_at = @expected_updated_at`,
  versionOf: `SELECT updated_at FROM team_projects WHERE id = ? AND team_id = ? AND project_id = ? AND organization = ?`,
  delete: `DELETE FROM team_projects WHERE id = ?`,
  deleteByTeam: `DELETE FROM team_projects WHERE team_id = ?`,
  deleteByProject: `DELETE FROM team_projects WHERE project_id = ?`,
} as const;

type UpdateResult = GuardedResult<"missing" | "stale">;

const filterParams = (projectId: string, filter: TeamProjectListFilter) => ({
  project_id: projectId,
  all_teams: filter.teamIds === undefined ? 1 : 0,
  teams: JSON.stringify(filter.teamIds ?? []),
  team: filter.teamId ?? null,
});

/** Team-project grants in SQLite: every statement prepared once, every write BEGIN IMMEDIATE. */
export function createSqliteTeamProjectStore(db: SqliteDatabase): TeamProjectStore {
  const s = Object.fromEntries(
    Object.entries(TEAM_PROJECT_SQL).map(([name, sql]) => [name, db.prepare(sql)]),
  ) as Record<keyof typeof TEAM_PROJECT_SQL, SqliteStatement>;
  const records = (list: unknown[]): TeamProjectRecord[] => (list as TeamProjectRow[]).map(fromRow);

  // One snapshot: the page and its total agree.
  const page = deferredTx(db, (projectId: string, filter: TeamProjectListFilter, request: PageRequest): Page<TeamProjectRecord> => {
    const params = filterParams(projectId, filter);
    return {
      items: records(s.page.all({ ...params, limit: request.limit, offset: request.offset })),
      total: (s.count.get(params) as { total: number }).total,
    };
  });
  const insert = immediateTx(db, (record: TeamProjectRecord) => {
    s.insert.run(toRow(record));
  });
  const update = immediateTx(db, (record: TeamProjectRecord, expectedUpdatedAt: string): UpdateResult => {
    if (s.update.run({ ...toRow(record), expected_updated_at: expectedUpdatedAt }).changes === 1) return { ok: true };
    const current = s.versionOf.get(record.id, record.teamId, record.projectId, record.organization);
    return { ok: false, reason: current ? "stale" : "missing" };
  });
  const remove = immediateTx(db, (id: string) => s.delete.run(id).changes === 1);
  const removeByTeam = immediateTx(db, (teamId: string) => s.deleteByTeam.run(teamId).changes);
  const removeByProject = immediateTx(db, (projectId: string) => s.deleteByProject.run(projectId).changes);

  return {
    async insert(record) {
      try {
        insert(record);
        return { ok: true };
      } catch (error) {
        // The pair's UNIQUE index is the guard; a PRIMARY KEY clash (a reused id) propagates.
        if (isUniqueViolation(error)) return { ok: false, reason: "duplicate" };
        throw error;
      }
    },
    async get(id) {
      const row = s.get.get(id);
      return row ? fromRow(row as TeamProjectRow) : null;
    },
    listByProject: async (projectId, filter, request) => page(projectId, filter, request),
    async listForTeams(projectId, teamIds) {
      if (teamIds.length === 0) return [];
      return records(s.forTeams.all(projectId, JSON.stringify(teamIds)));
    },
    update: async (record, expectedUpdatedAt) => update(record, expectedUpdatedAt),
    delete: async (id) => remove(id),
    deleteByTeam: async (teamId) => removeByTeam(teamId),
    deleteByProject: async (projectId) => removeByProject(projectId),
  };
}
