import type { AgentPool, Organization, PolicySet, Project, Team, User, Workspace } from "../../src/schemas/directory.js";
import type { DirectoryStore, OrganizationStore, TeamStore, UserStore } from "../../src/storage/types.js";
import * as rows from "./rows.js";
import { columnList, insertIgnoreSql, updateSql, type TableColumns } from "./statements.js";

/** How one directory record kind maps to its table: the key column, every column, the converters. */
export interface TableSpec<T, Row> extends TableColumns<Row> {
  key: keyof Row & string;
  toRow(record: T): Row;
  fromRow(row: Row): T;
}

/** The directory stores keyed by one column: get, insert unless taken, replace, delete. */
export interface KeyedStore<T> {
  get(key: string): Promise<T | null>;
  insert(record: T): Promise<boolean>;
  replace(record: T): Promise<boolean>;
  delete(key: string): Promise<boolean>;
}

/**
 * The statements of one directory table (named parameters; `table` may carry a schema prefix).
 * Columns are always named, never `*`. The insert has no conflict target: a taken key, or any
 * unique column, refuses it and the changed-row count says so.
 */
export function keyedSql<T, Row>(spec: TableSpec<T, Row>, table: string = spec.table) {
  const t = { table, columns: spec.columns };
  const list = columnList(t);
  return {
    get: `SELECT ${list} FROM ${table} WHERE ${spec.key} = @key`,
    insert: insertIgnoreSql(t),
    update: updateSql(t, "", undefined, spec.key),
    delete: `DELETE FROM ${table} WHERE ${spec.key} = @key`,
    byOrganization: `SELECT ${list} FROM ${table} WHERE organization = @organization ORDER BY id`,
    keys: `SELECT ${spec.key} AS key FROM ${table} ORDER BY ${spec.key}`,
  };
}

const spec = <T, Row>(
  table: string,
  key: keyof Row & string,
  columns: readonly (keyof Row & string)[],
  toRow: (record: T) => Row,
  fromRow: (row: Row) => T,
): TableSpec<T, Row> => ({ table, key, columns, toRow, fromRow });

export const ORGANIZATIONS = spec<Organization, rows.OrganizationRow>("organizations", "name", ["name", "email"], rows.toOrganizationRow, rows.fromOrganizationRow);
export const USERS = spec<User, rows.UserRow>("users", "id", ["id", "username", "email"], rows.toUserRow, rows.fromUserRow);
export const PROJECTS = spec<Project, rows.ProjectRow>("projects", "id", ["id", "organization", "name"], rows.toProjectRow, rows.fromProjectRow);
export const WORKSPACES = spec<Workspace, rows.WorkspaceRow>(
  "workspaces",
  "id",
  ["id", "organization", "name", "project_id", "working_directory", "vcs_repo_url", "vcs_branch"],
  rows.toWorkspaceRow,
  rows.fromWorkspaceRow,
);
export const TEAMS = spec<Team, rows.TeamRow>(
  "teams",
  "id",
  ["id", "organization", "name", "visibility", "org_permissions", "members", "owners"],
  rows.toTeamRow,
  rows.fromTeamRow,
);
export const POLICY_SETS = spec<PolicySet, rows.PolicySetRow>("policy_sets", "id", ["id", "organization", "name", "kind"], rows.toPolicySetRow, rows.fromPolicySetRow);
export const AGENT_POOLS = spec<AgentPool, rows.AgentPoolRow>("agent_pools", "id", ["id", "organization", "name"], rows.toAgentPoolRow, rows.fromAgentPoolRow);

export interface DirectoryStores {
  organizations: OrganizationStore;
  users: UserStore;
  projects: DirectoryStore<Project>;
  workspaces: DirectoryStore<Workspace>;
  teams: TeamStore;
  policySets: DirectoryStore<PolicySet>;
  agentPools: DirectoryStore<AgentPool>;
}

/** What an adapter supplies to build its directory stores: a store per table kind. */
export interface DirectoryStoreFactory {
  keyed<T, Row>(spec: TableSpec<T, Row>): KeyedStore<T>;
  /** Every key of the table, sorted. */
  keys<T, Row>(spec: TableSpec<T, Row>): () => Promise<string[]>;
  listed<T extends { id: string; organization: string }, Row>(spec: TableSpec<T, Row>): DirectoryStore<T>;
  teams(): TeamStore;
}

export function buildDirectoryStores(make: DirectoryStoreFactory): DirectoryStores {
  return {
    // decision D53: audit verify walks every organization.
    organizations: { ...make.keyed(ORGANIZATIONS), names: make.keys(ORGANIZATIONS) },
    users: make.keyed(USERS),
    projects: make.listed(PROJECTS),
    workspaces: make.listed(WORKSPACES),
    teams: make.teams(),
    policySets: make.listed(POLICY_SETS),
    agentPools: make.listed(AGENT_POOLS),
  };
}
