import { can, canReadGrant, customPermissions, grantPermissions, impliedPermissions } from "../domain/permissions.js";
import { ApiError, invalid, notFound } from "../errors.js";
import type { Principal } from "../schemas/common.js";
import type { Project, Team } from "../schemas/directory.js";
import type { Page, PageRequest } from "../schemas/records.js";
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
import { effectiveProjectAccess } from "./authorizer.js";
import { isoNow, type ServiceContext } from "./context.js";
import { parseOrThrow } from "./validate.js";

const ATTRIBUTES = "/data/attributes";
const DEFAULT_PAGE: PageRequest = { offset: 0, limit: 20 };
/** Compare-and-set retries before giving up under extreme contention. */
const MAX_ATTEMPTS = 8;

export interface TeamProjectListOptions {
  /** Only this team's grant (`filter[team][id]`). */
  teamId?: string;
  /** Only grants of these teams (a caller's visibility); absent: every grant. */
  teamIds?: readonly string[];
  /** Default: the first 20 (decision D7). */
  page?: PageRequest;
}

/** The grants of a project a principal may see (decision D21): every one, or only its teams'. */
export type GrantScope = { all: true } | { all: false; teamIds: readonly string[] };

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
const toView = (record: TeamProjectRecord): TeamProjectRecord => ({ ...record, ...grantPermissions(record) });

/** ISO timestamps of the core are fixed width, so string order is time order. */
const laterThan = (now: string, previous: string): string =>
  now > previous ? now : new Date(Date.parse(previous) + 1).toISOString();

/**
 * Team access to projects (spec 2.6, 4.6; decisions D19-D21) for the host's trusted code and the
 * HTTP routes. Attributes are the wire attributes (`access`, `project-access`, `workspace-access`),
 * validated here so a 422 points at the offending attribute.
 */
export function createTeamProjectService(ctx: ServiceContext) {
  const s = ctx.storage;
  const requireProject = async (projectId: string): Promise<Project> => {
    const project = await s.projects.get(projectId);
    if (!project) throw notFound();
    return project;
  };
  // A grant whose team or project left the directory is gone too (the directory also cascades).
  const load = async (id: string): Promise<{ grant: TeamProjectRecord; project: Project; team: Team }> => {
    const grant = await s.teamProjects.get(id);
    if (!grant) throw notFound();
    const [project, team] = await Promise.all([s.projects.get(grant.projectId), s.teams.get(grant.teamId)]);
    if (!project || !team) throw notFound();
    return { grant, project, team };
  };

  return {
    /** One page of a project's grants, ordered by creation; 404 when the project does not exist. */
    async list(projectId: string, options: TeamProjectListOptions = {}): Promise<Page<TeamProjectRecord>> {
      await requireProject(projectId);
      const page = options.page ?? DEFAULT_PAGE;
      // The storage contract takes pages validated by the core (decision D7).
      if (!Number.isSafeInteger(page.offset) || page.offset < 0) {
        throw new ApiError("invalid-attribute", { parameter: "page[number]", detail: "page[number] must be at least 1" });
      }
      if (!Number.isSafeInteger(page.limit) || page.limit < 1 || page.limit > 100) {
        throw new ApiError("invalid-attribute", { parameter: "page[size]", detail: "page[size] must be between 1 and 100" });
      }
      const filter = {
        ...(options.teamIds !== undefined ? { teamIds: options.teamIds } : {}),
        ...(options.teamId !== undefined ? { teamId: options.teamId } : {}),
      };
      const result = await s.teamProjects.listByProject(projectId, filter, page);
      return { items: result.items.map(toView), total: result.total };
    },

    async get(id: string): Promise<TeamProjectRecord> {
      return toView((await load(id)).grant);
    },

    /** The grant with its project and team, for routes that authorize on the project. */
    load,

    /**
     * Grants `teamId` access to `projectId`. 404 when either does not exist or the team belongs
     * to another organization (D5a); 422 for invalid attributes or a second grant of the pair (D20).
     */
    async create(projectId: string, teamId: string, attributes: TeamProjectCreateAttributes): Promise<TeamProjectRecord> {
      const project = await requireProject(projectId);
      const input = parseOrThrow(TeamProjectCreateAttributesSchema, attributes, ATTRIBUTES);
      const team = await s.teams.get(teamId);
      // decision D5a: another organization's team is answered like a missing one, so the answer
      // never tells whether an object of another organization exists.
      if (!team || team.organization !== project.organization) throw notFound();
      checkReadOnly(input.access, input);
      const permissions: PermissionSet =
        input.access === "custom" ? customPermissions(requested(input)) : impliedPermissions(input.access);
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
      const result = await s.teamProjects.insert(record);
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
        const { grant: current } = await load(id);
        const access = input.access ?? current.access;
        checkReadOnly(access, input);
        let permissions: PermissionSet;
        if (access !== "custom") permissions = impliedPermissions(access);
        else if (current.access === "custom") permissions = customPermissions(requested(input), grantPermissions(current));
        else permissions = customPermissions(requested(input));
        const next: TeamProjectRecord = {
          ...current,
          access,
          ...permissions,
          // The row's version: strictly later than the one replaced, even within one millisecond.
          updatedAt: laterThan(isoNow(ctx), current.updatedAt),
        };
        const result = await s.teamProjects.update(next, current.updatedAt);
        if (result.ok) return toView(next);
        if (result.reason === "missing") throw notFound();
      }
      throw new ApiError("conflict", { detail: "The team access is being updated concurrently; retry the request" });
    },

    async delete(id: string): Promise<void> {
      if (!(await s.teamProjects.delete(id))) throw notFound();
    },

    /**
     * Which of a project's grants `principal` may see (decision D21): owners and principals with
     * `project-access.teams = manage` see all; everyone else only the grants of their own teams
     * (secret teams included; an `organization`-visible team they are not on stays hidden).
     */
    async scopeFor(principal: Principal, project: Project): Promise<GrantScope> {
      const effective = await effectiveProjectAccess(ctx, principal, project);
      if (can(effective, "team-access:read-all").allowed) return { all: true };
      return { all: false, teamIds: principal.teamIds };
    },

    /** Whether `principal` may see `grant` of `project` (decision D21). */
    async canRead(principal: Principal, grant: TeamProjectRecord, project: Project): Promise<boolean> {
      return canReadGrant(await effectiveProjectAccess(ctx, principal, project), principal, grant).allowed;
    },
  };
}
export type TeamProjectService = ReturnType<typeof createTeamProjectService>;
