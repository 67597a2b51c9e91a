import type { AgentPool, Organization, PolicySet, Project, Team, User, Workspace } from "../../src/schemas/directory.js";
import type { DirectoryStore, OrganizationStore, TeamStore, UserStore } from "../../src/storage/types.js";
import * as rows from "../sqlite/rows.js";
import type { PgPoolLike, Queryable } from "./driver.js";
import { changed, rowsOf, sql, transaction } from "./driver.js";

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

/** The statements of one table, schema-qualified; columns are always named (never `*`). */
function statementsOf<T, Row>(q: string, spec: TableSpec<T, Row>) {
  const { key, columns } = spec;
  const table = `${q}${spec.table}`;
  const list = columns.join(", ");
  return {
    get: sql(`SELECT ${list} FROM ${table} WHERE ${key} = @key`),
    // No conflict target: a taken key (or any unique column) refuses the insert, rowCount says so.
    insert: sql(`INSERT INTO ${table} (${list}) VALUES (${columns.map((c) => `@${c}`).join(", ")}) ON CONFLICT DO NOTHING`),
    update: sql(`UPDATE ${table} SET ${columns.filter((c) => c !== key).map((c) => `${c} = @${c}`).join(", ")} WHERE ${key} = @${key}`),
    delete: sql(`DELETE FROM ${table} WHERE ${key} = @key`),
    byOrganization: sql(`SELECT ${list} FROM ${table} WHERE organization = @organization ORDER BY id`),
  };
}

function createKeyedStore<T, Row>(pool: PgPoolLike, q: string, spec: TableSpec<T, Row>): KeyedStore<T> {
  const s = statementsOf(q, spec);
  return {
    async get(key) {
      const [row] = await rowsOf<Row>(pool, s.get, { key });
      return row ? spec.fromRow(row) : null;
    },
    insert: async (record) => (await changed(pool, s.insert, spec.toRow(record) as object)) === 1,
    replace: async (record) => (await changed(pool, s.update, spec.toRow(record) as object)) === 1,
    delete: async (key) => (await changed(pool, s.delete, { key })) === 1,
  };
}

function createDirectoryStore<T extends { id: string; organization: string }, Row>(
  pool: PgPoolLike,
  q: string,
  spec: TableSpec<T, Row>,
): DirectoryStore<T> {
  const { byOrganization } = statementsOf(q, spec);
  return {
    ...createKeyedStore(pool, q, spec),
    listByOrganization: async (organization) => (await rowsOf<Row>(pool, byOrganization, { organization })).map(spec.fromRow),
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
 * Teams keep `members` as given in a JSON column (the record comes back unchanged) and mirror it
 * into `team_members` in the same transaction, so `listByMember` is an indexed join. The team's
 * own row is written first: its row lock orders racing writers of one team.
 */
function createTeamStore(pool: PgPoolLike, q: string): TeamStore {
  const base = createDirectoryStore(pool, q, TEAMS);
  const s = statementsOf(q, TEAMS);
  const clearMembers = sql(`DELETE FROM ${q}team_members WHERE team_id = @id`);
  const addMembers = sql(`INSERT INTO ${q}team_members (team_id, user_id)
    SELECT @id, m FROM unnest(@members::text[]) AS m ON CONFLICT DO NOTHING`);
  const byMember = sql(`SELECT ${TEAMS.columns.map((c) => `t.${c}`).join(", ")}
    FROM ${q}team_members m JOIN ${q}teams t ON t.id = m.team_id
    WHERE m.user_id = @user AND t.organization = @organization ORDER BY m.team_id`);

  const write = (statement: typeof s.insert, team: Team, clear: boolean) =>
    transaction(pool, async (client: Queryable) => {
      if ((await changed(client, statement, TEAMS.toRow(team))) !== 1) return false;
      if (clear) await changed(client, clearMembers, { id: team.id });
      if (team.members.length > 0) await changed(client, addMembers, { id: team.id, members: team.members });
      return true;
    });

  return {
    ...base,
    insert: (team) => write(s.insert, team, false),
    replace: (team) => write(s.update, team, true),
    // team_members rows go with the team (ON DELETE CASCADE), in the same statement.
    delete: base.delete,
    async listByMember(organization, user) {
      return (await rowsOf<rows.TeamRow>(pool, byMember, { user, organization })).map(rows.fromTeamRow);
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

export function createDirectoryStores(pool: PgPoolLike, q: string): DirectoryStores {
  return {
    organizations: createKeyedStore(pool, q, ORGANIZATIONS),
    users: createKeyedStore(pool, q, USERS),
    projects: createDirectoryStore(pool, q, PROJECTS),
    workspaces: createDirectoryStore(pool, q, WORKSPACES),
    teams: createTeamStore(pool, q),
    policySets: createDirectoryStore(pool, q, POLICY_SETS),
    agentPools: createDirectoryStore(pool, q, AGENT_POOLS),
  };
}
