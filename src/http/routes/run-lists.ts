import { isFiltered, needsDetails, runMatches, STATUS_GROUPS, type RunFacts, type RunListFilter, type StatusGroup } from "../../domain/run-filters.js";
import { badRequest, isApiError, notFound, quote } from "../../errors.js";
import type { Workspace } from "../../schemas/directory.js";
import type { RunRecord } from "../../schemas/run-task-records.js";
import { paginationDocument, type JsonApiDocument } from "../jsonapi.js";
import { toPageRequest } from "../pagination.js";
import type { QuerySpec } from "../query.js";
import { runDetailsOf } from "../run-providers.js";
import type { Route, RouteContext } from "../types.js";
import { runResourceOf } from "./run-read-support.js";
import { RUN_INCLUDES, runIncluded } from "./runs.js";
import { workspaceTarget } from "./run-task-support.js";

/**
 * decision D49: go-tfe's `Runs.List` (`GET /workspaces/:id/runs`) and `Runs.ListForOrganization`
 * (`GET /organizations/:name/runs`): the runs the host reported to runplane, newest first, paged
 * (D7), with the filters and searches that make sense for them and every `RunIncludeOpt` (D8).
 * Access is `runs:read` on each run's workspace: the organization's list holds only the runs of
 * workspaces the caller may read. A filtered list, and an organization's, looks at the newest
 * SCAN_LIMIT runs of each workspace.
 */

export const SCAN_LIMIT = 1000;
const CHUNK = 100;

const WORKSPACE_FILTERS = ["filter[status]", "filter[source]", "filter[operation]", "search[user]", "search[commit]", "search[basic]"];
const ORGANIZATION_FILTERS = [...WORKSPACE_FILTERS, "filter[workspace_names]", "filter[status_group]", "filter[agent_pool_names]", "filter[timeframe]"];

/** What runplane cannot filter on, and why: a 400 that says so rather than a list that ignores it. */
const REFUSED: Record<string, string> = {
  "filter[agent_pool_names]": "runplane does not filter runs by agent pool: the host runs them, runplane does not know where",
  "filter[timeframe]": "runplane does not filter runs by timeframe; page through the list, newest first",
};

const listOf = (raw: string | undefined): string[] | undefined => {
  const values = raw?.split(",").map((v) => v.trim()).filter((v) => v !== "");
  return values && values.length > 0 ? values : undefined;
};

function filterOf(ctx: RouteContext): RunListFilter {
  const f = ctx.query.filters;
  for (const [name, why] of Object.entries(REFUSED)) if (listOf(f[name]) !== undefined) throw badRequest(why, name);
  const groups = listOf(f["filter[status_group]"]);
  for (const g of groups ?? []) {
    if (!(STATUS_GROUPS as readonly string[]).includes(g)) throw badRequest(`filter[status_group] must be ${STATUS_GROUPS.join(", ")}; got ${quote(g)}`, "filter[status_group]");
  }
  const text = (name: string) => (f[name] === undefined || f[name] === "" ? undefined : f[name]);
  const filter: RunListFilter = {
    statuses: listOf(f["filter[status]"]),
    sources: listOf(f["filter[source]"]),
    operations: listOf(f["filter[operation]"]),
    statusGroups: groups as StatusGroup[] | undefined,
    workspaceNames: listOf(f["filter[workspace_names]"]),
    user: text("search[user]"),
    commit: text("search[commit]"),
    basic: text("search[basic]"),
  };
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as RunListFilter;
}

const newestFirst = (a: RunRecord, b: RunRecord): number =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1;

/** The newest `want` runs of each workspace (at most SCAN_LIMIT), merged newest first, and how many each has. */
async function newestRuns(ctx: RouteContext, workspaces: readonly Workspace[], want: number): Promise<{ runs: RunRecord[]; total: number }> {
  const runs: RunRecord[] = [];
  let total = 0;
  for (const workspace of workspaces) {
    for (let offset = 0; offset < Math.min(want, SCAN_LIMIT); offset += CHUNK) {
      const page = await ctx.app.services.runTasks.listRuns(workspace.id, { offset, limit: Math.min(CHUNK, want - offset) });
      if (offset === 0) total += page.total;
      runs.push(...page.items);
      if (page.items.length < CHUNK) break;
    }
  }
  return { runs: runs.sort(newestFirst), total };
}

/** What the filters look at of each run; the host's details only when a filter needs them. */
async function factsOf(ctx: RouteContext, run: RunRecord, workspaceName: string, withDetails: boolean, users: Map<string, Promise<string | null>>): Promise<RunFacts> {
  let username = users.get(run.createdBy);
  if (!username) users.set(run.createdBy, (username = run.createdBy === "" ? Promise.resolve(null) : ctx.app.services.directory.users.get(run.createdBy).then((u) => u?.username ?? null)));
  const details = withDetails ? await runDetailsOf(ctx.app.runs, ctx.app.logger, run) : null;
  return {
    id: run.id,
    message: run.message,
    isSpeculative: run.isSpeculative,
    commitHash: run.vcs?.commitHash ?? null,
    status: details?.status,
    source: details?.source,
    isDestroy: details?.isDestroy,
    username: await username,
    workspaceName,
  };
}

/** One page of the runs of `workspaces` that match the request's filters, and how many match. */
async function pageOf(ctx: RouteContext, workspaces: readonly Workspace[]): Promise<{ items: RunRecord[]; total: number }> {
  const filter = filterOf(ctx);
  const { offset, limit } = toPageRequest(ctx.query.page!);
  const chosen = filter.workspaceNames ? workspaces.filter((w) => filter.workspaceNames!.includes(w.name)) : workspaces;
  if (!isFiltered(filter) || (Object.keys(filter).length === 1 && filter.workspaceNames)) {
    if (chosen.length === 1) return ctx.app.services.runTasks.listRuns(chosen[0]!.id, { offset, limit });
    const { runs, total } = await newestRuns(ctx, chosen, offset + limit);
    return { items: runs.slice(offset, offset + limit), total };
  }
  const { runs } = await newestRuns(ctx, chosen, SCAN_LIMIT);
  const names = new Map(chosen.map((w) => [w.id, w.name]));
  const users = new Map<string, Promise<string | null>>();
  const withDetails = needsDetails(filter);
  const matching: RunRecord[] = [];
  for (const run of runs) if (runMatches(await factsOf(ctx, run, names.get(run.workspaceId) ?? "", withDetails, users), filter)) matching.push(run);
  return { items: matching.slice(offset, offset + limit), total: matching.length };
}

/** The list document: each run as `GET /runs/:id` writes it, and what `include` asks for, each resource once. */
async function listDocument(ctx: RouteContext, page: { items: RunRecord[]; total: number }): Promise<JsonApiDocument> {
  const data: JsonApiDocument[] = [];
  const included = new Map<string, JsonApiDocument>();
  for (const run of page.items) {
    const resource = await runResourceOf(ctx, run);
    data.push(resource.data);
    if (ctx.query.includes.size === 0) continue;
    const target = await workspaceTarget(ctx.app, run.organization, run.workspaceId);
    for (const doc of await runIncluded(ctx, run, target, resource.details)) included.set(`${String(doc.type)}:${String(doc.id)}`, doc);
  }
  const { links, meta } = paginationDocument(ctx.url, { ...ctx.query.page!, total: page.total });
  return ctx.query.includes.size === 0 ? { data, links, meta } : { data, included: [...included.values()], links, meta };
}

/** The workspaces of the organization whose runs the caller may read (`runs:read`, D21); 404 for another organization. */
async function readableWorkspaces(ctx: RouteContext, organization: string): Promise<Workspace[]> {
  if (ctx.principal.organization !== organization || !(await ctx.app.services.directory.organizations.get(organization))) throw notFound();
  const readable: Workspace[] = [];
  for (const workspace of await ctx.app.services.directory.workspaces.list(organization)) {
    try {
      await ctx.authorize(await workspaceTarget(ctx.app, organization, workspace.id));
      readable.push(workspace);
    } catch (error) {
      // D4: a workspace the caller may not read is as good as missing; its runs are left out.
      if (!isApiError(error) || error.code !== "not-found") throw error;
    }
  }
  return readable;
}

const query = (filters: readonly string[]): QuerySpec => ({ page: "always", include: RUN_INCLUDES, filters: filters.map((name) => ({ name })) });

export const runListRoutes: Route[] = [
  {
    method: "GET",
    path: "/workspaces/:workspace_id/runs",
    auth: "principal",
    query: query(WORKSPACE_FILTERS),
    async handle(ctx) {
      const workspace = await ctx.app.services.directory.workspaces.get(ctx.params.workspace_id!);
      if (!workspace || workspace.organization !== ctx.principal.organization) throw notFound();
      await ctx.authorize(await workspaceTarget(ctx.app, workspace.organization, workspace.id));
      return { status: 200, document: await listDocument(ctx, await pageOf(ctx, [workspace])) };
    },
  },
  {
    method: "GET",
    path: "/organizations/:organization_name/runs",
    auth: "principal",
    query: query(ORGANIZATION_FILTERS),
    async handle(ctx) {
      const workspaces = await readableWorkspaces(ctx, ctx.params.organization_name!);
      return { status: 200, document: await listDocument(ctx, await pageOf(ctx, workspaces)) };
    },
  },
];
