import type { AgentPool, Organization, PolicySet, Project, Team, User, Workspace } from "../../src/schemas/directory.js";
import type { DirectoryStore, OrganizationStore, TeamStore, UserStore } from "../../src/storage/types.js";
import type { SqliteDatabase } from "./driver.js";
import { immediateTx } from "./driver.js";
import * as rows from "./rows.js";

/** How one record kind maps to its table: the key column, every column, and the converters. */
interface TableSpec<T, Row> {
  table: string;
  key: keyof Row & string;
  columns: readonly (keyof Row & string)[];
  toRow(record: T): Row;
  fromRow(row: Row): T;
}

interface KeyedStore<T> {
  get(key: string): Promise<T | null>;
  insert(record: T): Promise<boolean>;
  replace(record: T): Promise<boolean>;
  delete(key: string): Promise<boolean>;
}

interface TableShape {
  table: string;
  key: string;
  columns: readonly string[];
}

/** Inserts a row unless its key (or any unique column) is taken: `changes` tells which. */
const insertSql = ({ table, columns }: TableShape): string =>
  `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")}) ON CONFLICT DO NOTHING`;

const updateSql = ({ table, key, columns }: TableShape): string =>
  `UPDATE ${table} SET ${columns.filter((c) => c !== key).map((c) => `${c} = @${c}`).join(", ")} WHERE ${key} = @${key}`;

/** get/insert/replace/delete by primary key; every statement prepared once, every write IMMEDIATE. */
function createKeyedStore<T, Row>(db: SqliteDatabase, spec: TableSpec<T, Row>): KeyedStore<T> {
  const { table, key } = spec;
  const select = db.prepare(`SELECT * FROM ${table} WHERE ${key} = ?`);
  const insert = db.prepare(insertSql(spec));
  const update = db.prepare(updateSql(spec));
  const remove = db.prepare(`DELETE FROM ${table} WHERE ${key} = ?`);
  const write = immediateTx(db, (statement: typeof insert, row: Row) => statement.run(row).changes === 1);
  const removeTx = immediateTx(db, (id: string) => remove.run(id).changes === 1);
  return {
    async get(id) {
      const row = select.get(id) as Row | undefined;
      return row ? spec.fromRow(row) : null;
    },
    insert: async (record) => write(insert, spec.toRow(record)),
    replace: async (record) => write(update, spec.toRow(record)),
    delete: async (id) => removeTx(id),
  };
}

function createDirectoryStore<T extends { id: string; organization: string }, Row>(
  db: SqliteDatabase,
  spec: TableSpec<T, Row>,
): DirectoryStore<T> {
  const byOrganization = db.prepare(`SELECT * FROM ${spec.table} WHERE organization = ? ORDER BY id`);
  return {
    ...createKeyedStore(db, spec),
    async listByOrganization(organization) {
      return (byOrganization.all(organization) as Row[]).map(spec.fromRow);
    },
  };
}

const ORGANIZATIONS: TableSpec<Organization, rows.OrganizationRow> = {
  table: "organizations",
  key: "name",
  columns: ["name", "email"],
  toRow: rows.toOrganizationRow,
  fromRow: rows.fromOrganizationRow,
};
const USERS: TableSpec<User, rows.UserRow> = {
  table: "users",
  key: "id",
  columns: ["id", "username", "email"],
  toRow: rows.toUserRow,
  fromRow: rows.fromUserRow,
};
const PROJECTS: TableSpec<Project, rows.ProjectRow> = {
  table: "projects",
  key: "id",
  columns: ["id", "organization", "name"],
  toRow: rows.toProjectRow,
  fromRow: rows.fromProjectRow,
};
const WORKSPACES: TableSpec<Workspace, rows.WorkspaceRow> = {
  table: "workspaces",
  key: "id",
  columns: ["id", "organization", "name", "project_id", "working_directory", "vcs_repo_url", "vcs_branch"],
  toRow: rows.toWorkspaceRow,
  fromRow: rows.fromWorkspaceRow,
};
const TEAMS: TableSpec<Team, rows.TeamRow> = {
  table: "teams",
  key: "id",
  columns: ["id", "organization", "name", "visibility", "org_permissions", "members"],
  toRow: rows.toTeamRow,
  fromRow: rows.fromTeamRow,
};
const POLICY_SETS: TableSpec<PolicySet, rows.PolicySetRow> = {
  table: "policy_sets",
  key: "id",
  columns: ["id", "organization", "name", "kind"],
  toRow: rows.toPolicySetRow,
  fromRow: rows.fromPolicySetRow,
};
const AGENT_POOLS: TableSpec<AgentPool, rows.AgentPoolRow> = {
  table: "agent_pools",
  key: "id",
  columns: ["id", "organization", "name"],
  toRow: rows.toAgentPoolRow,
  fromRow: rows.fromAgentPoolRow,
};

/**
 * An index walk by user (already in team id order, so no sort), then one primary-key lookup per
 * team. CROSS JOIN pins that loop order: without ANALYZE statistics the planner would rather scan
 * the organization's teams. Exported for the adapter tests' query-plan check.
 */
export const TEAMS_BY_MEMBER_SQL = `SELECT t.* FROM team_members m CROSS JOIN teams t ON t.id = m.team_id
  WHERE m.user_id = ? AND t.organization = ? ORDER BY m.team_id`;

/**
 * Teams keep `members` as given in a JSON column (the record comes back unchanged) and mirror it
 * into `team_members` in the same transaction, so `listByMember` is an indexed join.
 */
function createTeamStore(db: SqliteDatabase): TeamStore {
  const base = createDirectoryStore(db, TEAMS);
  const insertTeam = db.prepare(insertSql(TEAMS));
  const updateTeam = db.prepare(updateSql(TEAMS));
  const deleteTeam = db.prepare(`DELETE FROM teams WHERE id = ?`);
  const clearMembers = db.prepare(`DELETE FROM team_members WHERE team_id = ?`);
  const addMember = db.prepare(`INSERT OR IGNORE INTO team_members (team_id, user_id) VALUES (?, ?)`);
  const byMember = db.prepare(TEAMS_BY_MEMBER_SQL);

  const writeMembers = (team: Team): void => {
    clearMembers.run(team.id);
    for (const userId of team.members) addMember.run(team.id, userId);
  };
  const insert = immediateTx(db, (team: Team) => {
    if (insertTeam.run(TEAMS.toRow(team)).changes !== 1) return false;
    writeMembers(team);
    return true;
  });
  const replace = immediateTx(db, (team: Team) => {
    if (updateTeam.run(TEAMS.toRow(team)).changes !== 1) return false;
    writeMembers(team);
    return true;
  });
  const remove = immediateTx(db, (id: string) => {
    clearMembers.run(id);
    return deleteTeam.run(id).changes === 1;
  });

  return {
    get: base.get,
    listByOrganization: base.listByOrganization,
    insert: async (team) => insert(team),
    replace: async (team) => replace(team),
    delete: async (id) => remove(id),
    async listByMember(organization, userId) {
      return (byMember.all(userId, organization) as rows.TeamRow[]).map(rows.fromTeamRow);
    },
  };
}

export interface DirectoryStores {
  organizations: OrganizationStore;
  users: UserStore;
  projects: DirectoryStore<Project>;
  workspaces: DirectoryStore<Workspace>;
  teams: TeamStore;
  policySets: DirectoryStore<PolicySet>;
  agentPools: DirectoryStore<AgentPool>;
}

export function createDirectoryStores(db: SqliteDatabase): DirectoryStores {
  return {
    organizations: createKeyedStore(db, ORGANIZATIONS),
    users: createKeyedStore(db, USERS),
    projects: createDirectoryStore(db, PROJECTS),
    workspaces: createDirectoryStore(db, WORKSPACES),
    teams: createTeamStore(db),
    policySets: createDirectoryStore(db, POLICY_SETS),
    agentPools: createDirectoryStore(db, AGENT_POOLS),
  };
}
