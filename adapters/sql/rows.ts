import type { AgentPool, Organization, PolicySet, Project, Team, User, Workspace } from "../../src/schemas/directory.js";
import type { AgentTokenCreatorType, AgentTokenRecord, ApiTokenKind, ApiTokenRecord, VariableRecord, VarOwnerKind } from "../../src/schemas/records.js";
import type { VarCategory } from "../../src/schemas/common.js";
import type { AccessLevel, ProjectAccess, TeamProjectRecord, WorkspaceAccess } from "../../src/schemas/team-projects.js";
import type { TableColumns } from "./statements.js";

/**
 * Row <-> record converters of the directory, token, variable and grant tables, shared by the
 * SQLite and PostgreSQL adapters (their schemas use the same column names and types: booleans as
 * integer 0/1, arrays and objects as JSON text). Rows bind as named parameters (`@column`). Values
 * pass through untouched but for those two conversions. Enum columns are cast, not checked: the
 * core validated them before they were stored.
 */

export interface OrganizationRow { name: string; email: string | null }
export const toOrganizationRow = (r: Organization): OrganizationRow => ({ name: r.name, email: r.email ?? null });
export const fromOrganizationRow = (row: OrganizationRow): Organization => ({ name: row.name, email: row.email });

export interface UserRow { id: string; username: string; email: string | null }
export const toUserRow = (r: User): UserRow => ({ id: r.id, username: r.username, email: r.email ?? null });
export const fromUserRow = (row: UserRow): User => ({ id: row.id, username: row.username, email: row.email });

export interface ProjectRow { id: string; organization: string; name: string }
export const toProjectRow = (r: Project): ProjectRow => ({ id: r.id, organization: r.organization, name: r.name });
export const fromProjectRow = (row: ProjectRow): Project => ({ id: row.id, name: row.name, organization: row.organization });

export interface WorkspaceRow {
  id: string;
  organization: string;
  name: string;
  project_id: string;
  working_directory: string;
  vcs_repo_url: string | null;
  vcs_branch: string | null;
}
export const toWorkspaceRow = (r: Workspace): WorkspaceRow => ({
  id: r.id,
  organization: r.organization,
  name: r.name,
  project_id: r.projectId,
  working_directory: r.workingDirectory,
  vcs_repo_url: r.vcsRepoUrl ?? null,
  vcs_branch: r.vcsBranch ?? null,
});
export const fromWorkspaceRow = (row: WorkspaceRow): Workspace => ({
  id: row.id,
  name: row.name,
  organization: row.organization,
  projectId: row.project_id,
  workingDirectory: row.working_directory,
  vcsRepoUrl: row.vcs_repo_url,
  vcsBranch: row.vcs_branch,
});

export interface TeamRow {
  id: string;
  organization: string;
  name: string;
  visibility: string;
  org_permissions: string;
  members: string;
  /** decision D41: 1 for the organization's owners team. */
  owners: number;
}
export const toTeamRow = (r: Team): TeamRow => ({
  id: r.id,
  organization: r.organization,
  name: r.name,
  visibility: r.visibility,
  org_permissions: JSON.stringify(r.orgPermissions),
  members: JSON.stringify(r.members),
  owners: r.owners ? 1 : 0,
});
export const fromTeamRow = (row: TeamRow): Team => ({
  id: row.id,
  name: row.name,
  organization: row.organization,
  visibility: row.visibility as Team["visibility"],
  orgPermissions: JSON.parse(row.org_permissions) as Team["orgPermissions"],
  members: JSON.parse(row.members) as string[],
  owners: row.owners === 1,
});

export interface PolicySetRow { id: string; organization: string; name: string; kind: string }
export const toPolicySetRow = (r: PolicySet): PolicySetRow => ({ id: r.id, organization: r.organization, name: r.name, kind: r.kind });
export const fromPolicySetRow = (row: PolicySetRow): PolicySet => ({
  id: row.id,
  name: row.name,
  organization: row.organization,
  kind: row.kind as PolicySet["kind"],
});

export interface AgentPoolRow { id: string; organization: string; name: string }
export const toAgentPoolRow = (r: AgentPool): AgentPoolRow => ({ id: r.id, organization: r.organization, name: r.name });
export const fromAgentPoolRow = (row: AgentPoolRow): AgentPool => ({ id: row.id, name: row.name, organization: row.organization });

export interface ApiTokenRow {
  id: string;
  digest: string;
  organization: string;
  kind: string;
  user_id: string | null;
  team_id: string | null;
  description: string;
  created_at: string;
  last_used_at: string | null;
}
export const API_TOKENS: TableColumns<ApiTokenRow> = {
  table: "api_tokens",
  columns: ["id", "digest", "organization", "kind", "user_id", "team_id", "description", "created_at", "last_used_at"],
};
export const toApiTokenRow = (r: ApiTokenRecord): ApiTokenRow => ({
  id: r.id,
  digest: r.digest,
  organization: r.organization,
  kind: r.kind,
  user_id: r.userId ?? null,
  team_id: r.teamId ?? null,
  description: r.description,
  created_at: r.createdAt,
  last_used_at: r.lastUsedAt ?? null,
});
export const fromApiTokenRow = (row: ApiTokenRow): ApiTokenRecord => ({
  id: row.id,
  digest: row.digest,
  organization: row.organization,
  kind: row.kind as ApiTokenKind,
  userId: row.user_id,
  teamId: row.team_id,
  description: row.description,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

export interface VariableRow {
  id: string;
  owner_kind: string;
  owner_id: string;
  key: string;
  value: string;
  description: string | null;
  category: string;
  hcl: number;
  sensitive: number;
  version_id: string;
  created_at: string;
  updated_at: string;
}
export const VARIABLES: TableColumns<VariableRow> = {
  table: "variables",
  columns: ["id", "owner_kind", "owner_id", "key", "value", "description", "category", "hcl", "sensitive", "version_id", "created_at", "updated_at"],
};
export const toVariableRow = (r: VariableRecord): VariableRow => ({
  id: r.id,
  owner_kind: r.ownerKind,
  owner_id: r.ownerId,
  key: r.key,
  value: r.value,
  description: r.description ?? null,
  category: r.category,
  hcl: r.hcl ? 1 : 0,
  sensitive: r.sensitive ? 1 : 0,
  version_id: r.versionId,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});
export const fromVariableRow = (row: VariableRow): VariableRecord => ({
  id: row.id,
  ownerKind: row.owner_kind as VarOwnerKind,
  ownerId: row.owner_id,
  key: row.key,
  value: row.value,
  description: row.description,
  category: row.category as VarCategory,
  hcl: row.hcl === 1,
  sensitive: row.sensitive === 1,
  versionId: row.version_id,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface AgentTokenRow {
  id: string;
  agent_pool_id: string;
  organization: string;
  description: string;
  digest: string;
  created_at: string;
  last_used_at: string | null;
  created_by_type: string;
  created_by_id: string;
}
export const AGENT_TOKENS: TableColumns<AgentTokenRow> = {
  table: "agent_tokens",
  columns: ["id", "agent_pool_id", "organization", "description", "digest", "created_at", "last_used_at", "created_by_type", "created_by_id"],
};
export const toAgentTokenRow = (r: AgentTokenRecord): AgentTokenRow => ({
  id: r.id,
  agent_pool_id: r.agentPoolId,
  organization: r.organization,
  description: r.description,
  digest: r.digest,
  created_at: r.createdAt,
  last_used_at: r.lastUsedAt ?? null,
  created_by_type: r.createdByType,
  created_by_id: r.createdById,
});
export const fromAgentTokenRow = (row: AgentTokenRow): AgentTokenRecord => ({
  id: row.id,
  agentPoolId: row.agent_pool_id,
  organization: row.organization,
  description: row.description,
  digest: row.digest,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  createdByType: row.created_by_type as AgentTokenCreatorType,
  createdById: row.created_by_id,
});

export interface TeamProjectRow {
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
export const TEAM_PROJECTS: TableColumns<TeamProjectRow> = {
  table: "team_projects",
  columns: ["id", "team_id", "project_id", "organization", "access", "project_access", "workspace_access", "created_at", "updated_at"],
};
export const toTeamProjectRow = (r: TeamProjectRecord): TeamProjectRow => ({
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
export const fromTeamProjectRow = (row: TeamProjectRow): TeamProjectRecord => ({
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
