import { invalid, notFound } from "../../errors.js";
import type { Project } from "../../schemas/directory.js";
import {
  toProjectAccessWire,
  toWorkspaceAccessWire,
  type TeamProjectCreateAttributes,
  type TeamProjectRecord,
  type TeamProjectUpdateAttributes,
} from "../../schemas/team-projects.js";
import { readResourceBody } from "../documents.js";
import type { ResourceDefinition } from "../jsonapi.js";
import { TeamProjectAttributes } from "../../schemas/wire.js";
import { toPageRequest } from "../pagination.js";
import type { Route, RouteContext } from "../types.js";

const TYPE = "team-projects";

/** Team access to projects, spec 2.6 and 4.6 with decisions D3, D4, D7, D20, D21, D23. */
export const teamProjectResource = (basePath: string): ResourceDefinition => ({
  type: TYPE,
  attributes: TeamProjectAttributes,
  // The permission objects are written in wire names already; the serializer must not touch them.
  verbatim: ["projectAccess", "workspaceAccess"],
  self: (d) => `${basePath}/team-projects/${String(d.id)}`,
  relationships: {
    // Host-chosen directory ids may hold any character; generated ones pass through unchanged.
    project: { type: "projects", related: (d) => `${basePath}/projects/${encodeURIComponent(String(d.project))}` },
    team: { type: "teams", related: (d) => `${basePath}/teams/${encodeURIComponent(String(d.team))}` },
  },
});

const toData = (g: TeamProjectRecord) => ({
  id: g.id,
  access: g.access,
  projectAccess: toProjectAccessWire(g.projectAccess),
  workspaceAccess: toWorkspaceAccessWire(g.workspaceAccess),
  project: g.projectId,
  team: g.teamId,
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The id of a required to-one relationship `{ data: { type, id } }`; 422 otherwise. */
function relationshipId(relationships: Record<string, unknown>, name: string, type: string): string {
  const pointer = `/data/relationships/${name}`;
  const label = name.charAt(0).toUpperCase() + name.slice(1);
  const rel = relationships[name];
  if (rel === undefined || rel === null) throw invalid(pointer, `${label} is required`);
  const data = isObject(rel) ? rel.data : undefined;
  if (!isObject(data)) throw invalid(`${pointer}/data`, `${label} must be a relationship with a data object`);
  if (data.type !== type) throw invalid(`${pointer}/data/type`, `${label} type must be "${type}"`);
  if (typeof data.id !== "string" || data.id === "") throw invalid(`${pointer}/data/id`, `${label} id must be a non-empty string`);
  return data.id;
}

async function loadProject(ctx: RouteContext, projectId: string): Promise<Project> {
  const project = await ctx.app.services.directory.projects.get(projectId);
  if (!project) throw notFound();
  await ctx.authorize({ organization: project.organization, projectId: project.id });
  return project;
}

/** The grant of the path after the route's check on its project; 404 for anything not visible. */
async function loadGrant(ctx: RouteContext) {
  const loaded = await ctx.app.services.teamProjects.load(ctx.params.id!);
  await ctx.authorize({ organization: loaded.project.organization, projectId: loaded.project.id });
  return loaded;
}

export const teamProjectRoutes: Route[] = [
  {
    method: "GET",
    path: "/team-projects",
    auth: "principal",
    query: { page: "always", filters: [{ name: "filter[project][id]", required: true }, { name: "filter[team][id]" }] },
    async handle(ctx) {
      const project = await loadProject(ctx, ctx.query.filters["filter[project][id]"]!);
      const page = ctx.query.page!;
      // decision D21: without team-access:read-all only the principal's own teams' grants are listed.
      const scope = await ctx.app.services.teamProjects.scopeFor(ctx.principal, project);
      const teamId = ctx.query.filters["filter[team][id]"];
      const result = await ctx.app.services.teamProjects.list(project.id, {
        ...(scope.all ? {} : { teamIds: scope.teamIds }),
        ...(teamId !== undefined ? { teamId } : {}),
        page: toPageRequest(page),
      });
      const pagination = { number: page.number, size: page.size, total: result.total };
      return { status: 200, document: ctx.app.jsonapi.collection(TYPE, result.items.map(toData), { url: ctx.url, pagination }) };
    },
  },
  {
    method: "GET",
    path: "/team-projects/:id",
    auth: "principal",
    async handle(ctx) {
      const { grant, project } = await loadGrant(ctx);
      // decision D4: another team's grant the principal may not see is missing, not forbidden.
      if (!(await ctx.app.services.teamProjects.canRead(ctx.principal, grant, project))) throw notFound();
      return { status: 200, document: ctx.app.jsonapi.resource(TYPE, toData(await ctx.app.services.teamProjects.get(grant.id))) };
    },
  },
  {
    method: "POST",
    path: "/team-projects",
    auth: "principal",
    async handle(ctx) {
      const body = readResourceBody(ctx.body, [TYPE]);
      const projectId = relationshipId(body.relationships, "project", "projects");
      const teamId = relationshipId(body.relationships, "team", "teams");
      const project = await loadProject(ctx, projectId);
      // The service validates the attributes with zod; the cast only names the expected shape.
      const grant = await ctx.app.services.teamProjects.create(project.id, teamId, body.attributes as TeamProjectCreateAttributes);
      return { status: 201, document: ctx.app.jsonapi.resource(TYPE, toData(grant)) };
    },
  },
  {
    method: "PATCH",
    path: "/team-projects/:id",
    auth: "principal",
    async handle(ctx) {
      const { grant } = await loadGrant(ctx);
      const body = readResourceBody(ctx.body, [TYPE], grant.id);
      const updated = await ctx.app.services.teamProjects.update(grant.id, body.attributes as TeamProjectUpdateAttributes);
      return { status: 200, document: ctx.app.jsonapi.resource(TYPE, toData(updated)) };
    },
  },
  {
    method: "DELETE",
    path: "/team-projects/:id",
    auth: "principal",
    async handle(ctx) {
      const { grant } = await loadGrant(ctx);
      await ctx.app.services.teamProjects.delete(grant.id);
      return { status: 204 };
    },
  },
];
