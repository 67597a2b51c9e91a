import { can, canReadGrant } from "../domain/permissions.js";
import { ApiError } from "../errors.js";
import type { Principal } from "../schemas/common.js";
import type { Project } from "../schemas/directory.js";
import type { Page, PageRequest } from "../schemas/records.js";
import type { TeamProjectRecord } from "../schemas/team-projects.js";
import { effectiveProjectAccess } from "./authorizer.js";
import type { ServiceContext } from "./context.js";
import { createTeamProjectWrites, loadGrant, requireProject, toView } from "./team-project-writes.js";

const DEFAULT_PAGE: PageRequest = { offset: 0, limit: 20 };

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

/** The storage contract takes pages validated by the core (decision D7). */
function checkPage(page: PageRequest): void {
  if (!Number.isSafeInteger(page.offset) || page.offset < 0) {
    throw new ApiError("invalid-attribute", { parameter: "page[number]", detail: "page[number] must be at least 1" });
  }
  if (!Number.isSafeInteger(page.limit) || page.limit < 1 || page.limit > 100) {
    throw new ApiError("invalid-attribute", { parameter: "page[size]", detail: "page[size] must be between 1 and 100" });
  }
}

/**
 * Team access to projects (spec 2.6, 4.6; decisions D19-D21) for the host's trusted code and the
 * HTTP routes. Attributes are the wire attributes (`access`, `project-access`, `workspace-access`),
 * validated here so a 422 points at the offending attribute.
 */
export function createTeamProjectService(ctx: ServiceContext) {
  const s = ctx.storage;
  const load = (id: string) => loadGrant(s, id);

  return {
    ...createTeamProjectWrites(ctx),
    /** One page of a project's grants, ordered by creation; 404 when the project does not exist. */
    async list(projectId: string, options: TeamProjectListOptions = {}): Promise<Page<TeamProjectRecord>> {
      await requireProject(s, projectId);
      const page = options.page ?? DEFAULT_PAGE;
      checkPage(page);
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
