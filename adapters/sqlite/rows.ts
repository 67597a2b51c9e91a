import type { AgentPool, Organization, PolicySet, Project, Team, User, Workspace } from "../../src/schemas/directory.js";
import type { ApiTokenKind, ApiTokenRecord, VariableRecord, VarOwnerKind } from "../../src/schemas/records.js";
import type { VarCategory } from "../../src/schemas/common.js";

/**
 * Row <-> record converters. Rows use the column names of schema.ts and bind as named parameters
 * (`@column`). Values pass through untouched: the only conversions are booleans to 0/1 and arrays
 * to JSON text. Enum columns are cast, not checked: the core validated them before they were stored.
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
}
export const toTeamRow = (r: Team): TeamRow => ({
  id: r.id,
  organization: r.organization,
  name: r.name,
  visibility: r.visibility,
  org_permissions: JSON.stringify(r.orgPermissions),
  members: JSON.stringify(r.members),
});
export const fromTeamRow = (row: TeamRow): Team => ({
  id: row.id,
  name: row.name,
  organization: row.organization,
  visibility: row.visibility as Team["visibility"],
  orgPermissions: JSON.parse(row.org_permissions) as Team["orgPermissions"],
  members: JSON.parse(row.members) as string[],
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
