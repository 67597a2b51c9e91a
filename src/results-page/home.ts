import type { Principal } from "../schemas/common.js";
import type { Workspace } from "../schemas/directory.js";
import type { RunRecord } from "../schemas/run-task-records.js";
import type { RunRow } from "./run-list.js";
import { failingIntegrations } from "./delivery.js";
import type { ResultsPageSource } from "./types.js";

/**
 * What the home (`<prefix>/`) and an organization's page (`<prefix>/:organization`) show:
 * the workspaces the caller may read and the newest runs across them. Composed of the reads the
 * workspace page already makes, so no storage method serves a page alone.
 */

/** Runs in the "recent runs" list. */
export const RECENT_RUNS = 20;

export interface WorkspaceSummary {
  workspace: Workspace;
  /** How many runs it has, and its newest one. */
  runs: number;
  latest: RunRecord | null;
}

export interface OrganizationModel {
  name: string;
  /** The readable workspaces, by name. Never empty: an organization without one is not shown. */
  workspaces: WorkspaceSummary[];
}

export interface OverviewModel {
  organizations: OrganizationModel[];
  /** At most {@link RECENT_RUNS}, newest first. */
  recent: RunRow[];
}

/**
 * decision D21: a workspace is readable with `runs:read` on its project, asked of the instance's
 * authorizer (the one the run and workspace pages ask), never decided here.
 */
export const mayReadRuns = (source: ResultsPageSource, principal: Principal, w: Workspace): Promise<boolean> =>
  source.auth.authorize(principal, "runs:read", { organization: w.organization, workspaceId: w.id, projectId: w.projectId });

async function readableWorkspaces(source: ResultsPageSource, principal: Principal, organization: string): Promise<Workspace[]> {
  const all = (await source.directory.workspaces.list(organization)).filter((w) => w.organization === organization);
  const allowed = await Promise.all(all.map((w) => mayReadRuns(source, principal, w)));
  return all.filter((_, i) => allowed[i]).sort((a, b) => a.name.localeCompare(b.name) || (a.id < b.id ? -1 : 1));
}

/** The storage's order of a workspace's runs (createdAt, then id, descending; D9 timestamps sort as text). */
const newestFirst = (a: RunRecord, b: RunRecord): number =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1;

/**
 * The readable workspaces of `organizations` and their newest runs. Each workspace is asked for its
 * newest {@link RECENT_RUNS} only (enough to merge the newest overall), so one view reads at most
 * that many runs per readable workspace, and stages for the runs shown.
 */
export async function loadOverview(source: ResultsPageSource, principal: Principal, organizations: readonly string[]): Promise<OverviewModel> {
  const readable = await Promise.all(organizations.map(async (name) => ({ name, workspaces: await readableWorkspaces(source, principal, name) })));
  const pages = new Map(
    await Promise.all(
      readable.flatMap((o) => o.workspaces).map(async (w) => [w.id, await source.runTasks.listRuns(w.id, { offset: 0, limit: RECENT_RUNS })] as const),
    ),
  );
  const newest = readable
    .flatMap((o) => o.workspaces.flatMap((workspace) => (pages.get(workspace.id)?.items ?? []).map((run) => ({ run, workspace }))))
    .sort((a, b) => newestFirst(a.run, b.run))
    .slice(0, RECENT_RUNS);
  const recent = await Promise.all(
    newest.map(async (r) => {
      const stages = (await source.runTasks.listStages(r.run.id)).items;
      return { ...r, stages, failing: await failingIntegrations(source, stages) };
    }),
  );
  const organizationsShown = readable
    .filter((o) => o.workspaces.length > 0)
    .map((o) => ({
      name: o.name,
      workspaces: o.workspaces.map((workspace) => {
        const page = pages.get(workspace.id);
        return { workspace, runs: page?.total ?? 0, latest: page?.items[0] ?? null };
      }),
    }));
  return { organizations: organizationsShown, recent };
}
