import { customPermissions, grantPermissions, impliedPermissions } from "../domain/permissions.js";
import { ApiError, invalid, notFound } from "../errors.js";
import type { Project, Team } from "../schemas/directory.js";
import {
  TeamProjectCreateAttributesSchema,
  TeamProjectUpdateAttributesSchema,
  fromProjectAccessInput,
  fromWorkspaceAccessInput,
  type AccessLevel,
  type PermissionSet,
  type ProjectAccessInput,
  type TeamProjectCreateAttributes,
  type TeamProjectRecord,
  type TeamProjectUpdateAttributes,
  type WorkspaceAccessInput,
} from "../schemas/team-projects.js";
import type { Storage } from "../storage/types.js";
import { isoNow, type ServiceContext } from "./context.js";
import { parseOrThrow } from "./validate.js";
import { audited, changesOf } from "./audit.js";

/** decision D53: what a team access event names. */
const GRANT_FIELDS = ["teamId", "projectId", "access", "projectAccess", "workspaceAccess"] as const;
const grantDraft = (record: TeamProjectRecord, action: string, before: TeamProjectRecord | null, after: TeamProjectRecord | null) => ({
  organization: record.organization,
  resource: { type: "team-project", id: record.id },
  action,
  changes: changesOf(before, after, GRANT_FIELDS),
});

const ATTRIBUTES = "/data/attributes";
/** Compare-and-set retries before giving up under extreme contention. */
const MAX_ATTEMPTS = 8;

// decision D20: permission attributes are read-only unless access is custom. An empty object names
// no permission, so it changes nothing and is accepted (go-tfe may send one).
function checkReadOnly(access: AccessLevel, attributes: TeamProjectUpdateAttributes): void {
  if (access === "custom") return;
  for (const name of ["project-access", "workspace-access"] as const) {
    const value: ProjectAccessInput | WorkspaceAccessInput | undefined = attributes[name];
    if (value !== undefined && Object.keys(value).length > 0) {
      throw invalid(`${ATTRIBUTES}/${name}`, `${name === "project-access" ? "Project" : "Workspace"} access can only be set when access is custom`);
    }
  }
}

const requested = (attributes: TeamProjectUpdateAttributes) => ({
  projectAccess: attributes["project-access"] ? fromProjectAccessInput(attributes["project-access"]) : undefined,
  workspaceAccess: attributes["workspace-access"] ? fromWorkspaceAccessInput(attributes["workspace-access"]) : undefined,
});

/** A fixed level shows the table's values, never a stored copy (so an old row cannot disagree). */
export const toView = (record: TeamProjectRecord): TeamProjectRecord => ({ ...record, ...grantPermissions(record) });

/** ISO timestamps of the core are fixed width, so string order is time order. */
const laterThan = (now: string, previous: string): string =>
  now > previous ? now : new Date(Date.parse(previous) + 1).toISOString();

/**
 * The permissions a grant gets (decision D20): a fixed level takes the table's values; a switch to
 * custom starts from the custom defaults; custom to custom (`current` custom) keeps what the patch
 * does not name.
 */
function permissionsOf(access: AccessLevel, attributes: TeamProjectUpdateAttributes, current?: TeamProjectRecord): PermissionSet {
  if (access !== "custom") return impliedPermissions(access);
  if (current?.access === "custom") return customPermissions(requested(attributes), grantPermissions(current));
  return customPermissions(requested(attributes));
}

export async function requireProject(s: Storage, projectId: string): Promise<Project> {
  const project = await s.projects.get(projectId);
  if (!project) throw notFound();
  return project;
}

// A grant whose team or project left the directory is gone too (the directory also cascades).
export async function loadGrant(s: Storage, id: string): Promise<{ grant: TeamProjectRecord; project: Project; team: Team }> {
  const grant = await s.teamProjects.get(id);
  if (!grant) throw notFound();
  const [project, team] = await Promise.all([s.projects.get(grant.projectId), s.teams.get(grant.teamId)]);
  if (!project || !team) throw notFound();
  return { grant, project, team };
}

/** Granting, changing and removing team access to a project (decisions D5a, D20). */
export function createTeamProjectWrites(ctx: ServiceContext) {
  const s = ctx.storage;
  return {
    /**
     * Grants `teamId` access to `projectId`. 404 when either does not exist or the team belongs
     * to another organization (D5a); 422 for invalid attributes or a second grant of the pair (D20).
     */
    async create(projectId: string, teamId: string, attributes: TeamProjectCreateAttributes): Promise<TeamProjectRecord> {
      const project = await requireProject(s, projectId);
      const input = parseOrThrow(TeamProjectCreateAttributesSchema, attributes, ATTRIBUTES);
      const team = await s.teams.get(teamId);
      // decision D5a: another organization's team is answered like a missing one, so the answer
      // never tells whether an object of another organization exists.
      if (!team || team.organization !== project.organization) throw notFound();
      checkReadOnly(input.access, input);
      const permissions = permissionsOf(input.access, input);
      const now = isoNow(ctx);
      const record: TeamProjectRecord = {
        id: ctx.newId("tprj"),
        teamId: team.id,
        projectId: project.id,
        organization: project.organization,
        access: input.access,
        ...permissions,
        createdAt: now,
        updatedAt: now,
      };
      const result = await audited(ctx, grantDraft(record, "create", null, record), () => s.teamProjects.insert(record));
      if (!result.ok) throw invalid("/data/relationships/team", "Team has already been taken");
      return toView(record);
    },

    /**
     * Changes the access of a grant (decision D20): a fixed level takes the table's values; a switch
     * to custom starts from the custom defaults; custom to custom keeps what the patch does not name.
     */
    async update(id: string, attributes: TeamProjectUpdateAttributes): Promise<TeamProjectRecord> {
      const input = parseOrThrow(TeamProjectUpdateAttributesSchema, attributes, ATTRIBUTES);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const { grant: current } = await loadGrant(s, id);
        const access = input.access ?? current.access;
        checkReadOnly(access, input);
        const next: TeamProjectRecord = {
          ...current,
          access,
          ...permissionsOf(access, input, current),
          // The row's version: strictly later than the one replaced, even within one millisecond.
          updatedAt: laterThan(isoNow(ctx), current.updatedAt),
        };
        const result = await audited(ctx, grantDraft(next, "update", current, next), () => s.teamProjects.update(next, current.updatedAt));
        if (result.ok) return toView(next);
        if (result.reason === "missing") throw notFound();
      }
      throw new ApiError("conflict", { detail: "The team access is being updated concurrently; retry the request" });
    },

    async delete(id: string): Promise<void> {
      const current = await s.teamProjects.get(id);
      if (!current || !(await audited(ctx, grantDraft(current, "destroy", current, null), () => s.teamProjects.delete(id)))) throw notFound();
    },
  };
}
