import type { Workspace } from "../schemas/directory.js";
import { loadRunPage, parseFilter } from "./data.js";
import { loadOverview, mayReadRuns } from "./home.js";
import { homePage, organizationPage } from "./home-page.js";
import { messagePage, notFoundPage, type Chrome } from "./layout.js";
import type { PageParts } from "./page-parts.js";
import { runPage } from "./render.js";
import { page, unauthorized } from "./responses.js";
import { mayRetry, noticeOf } from "./retry-action.js";
import type { Caller } from "./sign-in.js";
import type { ResultsPageSource, RunTarget } from "./types.js";
import { AUDIT_VIEW_ROWS, AUDIT_VIEW_SCAN, auditBeforeOf, auditFiltersOf, auditPage, matchesAudit, type AuditFilters } from "./audit-page.js";
import type { AuditEntry } from "../schemas/audit.js";
import { findWorkspace, loadWorkspacePage, parsePageNumber, workspacePage } from "./workspace.js";

/** Where the run was asked for by `run_app_url`'s path: the run must be of that workspace (D25). */
export interface RunPlace {
  organization: string;
  workspaceName: string;
}

/** The pages that read: a run, a workspace's runs, the home and an organization's overview. */
export function createReadRoutes({ source, prefix, maxOutcomes, secure }: PageParts) {
  const deny = (url: URL, chrome: Chrome, caller: Caller): Response => unauthorized(prefix, secure(url), chrome, caller, `${url.pathname}${url.search}`);

  const targetOf = (organization: string, workspaceId: string, workspace: Workspace | null): RunTarget =>
    workspace ? { organization, workspaceId, projectId: workspace.projectId } : { organization, workspaceId };

  async function runRoute(url: URL, runId: string, place: RunPlace | null, chrome: Chrome, caller: Caller): Promise<Response> {
    if (!caller.principal) return deny(url, chrome, caller);
    const run = await source.runTasks.getRun(runId);
    if (!run) return page(404, notFoundPage(chrome));
    const workspace = await source.directory.workspaces.get(run.workspaceId);
    // decision D4: no permission looks exactly like no run.
    if (!(await source.auth.authorize(caller.principal, "runs:read", targetOf(run.organization, run.workspaceId, workspace)))) {
      return page(404, notFoundPage(chrome));
    }
    // decision D25: a run asked for under another organization or workspace is not there.
    if (place && (run.organization !== place.organization || workspace?.name !== place.workspaceName)) return page(404, notFoundPage(chrome));
    const target = targetOf(run.organization, run.workspaceId, workspace);
    const extras = { mayRetry: await mayRetry(source, caller.principal, target), notice: noticeOf(url.searchParams) };
    const model = await loadRunPage(source, run, workspace, parseFilter(url.searchParams), maxOutcomes, extras);
    return page(200, runPage(chrome, model, place ? url.pathname : undefined));
  }

  async function workspaceRoute(url: URL, place: RunPlace, chrome: Chrome, caller: Caller): Promise<Response> {
    const principal = caller.principal;
    if (!principal) return deny(url, chrome, caller);
    const pageNumber = parsePageNumber(url.searchParams);
    if (pageNumber === null) return page(400, messagePage(chrome, "Bad request", "The page number must be an integer from 1 to 1000000."));
    // decision D4: a workspace the caller may not read (runs:read) is not found, and its runs are never listed.
    const workspace = await findWorkspace(source, place.organization, place.workspaceName, (w) => mayReadRuns(source, principal, w));
    if (!workspace) return page(404, notFoundPage(chrome, "workspace"));
    return page(200, workspacePage(chrome, await loadWorkspacePage(source, workspace, pageNumber)));
  }

  /** The home: the caller's organization (a principal belongs to one), if it may read a workspace of it. */
  async function homeRoute(url: URL, chrome: Chrome, caller: Caller): Promise<Response> {
    if (!caller.principal) return deny(url, chrome, caller);
    return page(200, homePage(chrome, await loadOverview(source, caller.principal, [caller.principal.organization])));
  }

  async function organizationRoute(url: URL, organization: string, chrome: Chrome, caller: Caller): Promise<Response> {
    if (!caller.principal) return deny(url, chrome, caller);
    const { organizations, recent } = await loadOverview(source, caller.principal, [organization]);
    // decisions D4, D5a: an organization with no workspace the caller may read looks exactly like none.
    const shown = organizations[0];
    if (!shown) return page(404, notFoundPage(chrome, "organization"));
    // Found from outside: nothing linked to the audit view; its readers see the link, no one else.
    return page(200, organizationPage(chrome, shown, recent, await mayReadAudit(caller.principal, organization)));
  }

  /** decision D53: the audit view's readers: the organization's owners, where the storage keeps a trail. */
  const mayReadAudit = async (principal: NonNullable<Caller["principal"]>, organization: string): Promise<boolean> =>
    source.audit !== undefined && principal.organization === organization && (await source.auth.authorize(principal, "audit-trail:read", { organization }));

  /** decision D53: `<prefix>/:organization/-/audit`, the organization's audit view, owners only (404 otherwise, D4). */
  async function auditRoute(url: URL, organization: string, chrome: Chrome, caller: Caller): Promise<Response> {
    if (!caller.principal) return deny(url, chrome, caller);
    const trail = source.audit;
    if (!trail || !(await mayReadAudit(caller.principal, organization))) return page(404, notFoundPage(chrome, "organization"));
    const filters = auditFiltersOf(url);
    const before = auditBeforeOf(url);
    const { rows, events, complete, next } = await newestMatching(trail, organization, filters, before);
    return page(200, auditPage(chrome, organization, filters, rows, { events, complete, before, next }));
  }

  return { runRoute, workspaceRoute, homeRoute, organizationRoute, auditRoute };
}

const AUDIT_PAGE = 1_000;

/**
 * The newest events that pass `filters` (older than seq `before`, when given), reading back a page
 * of 1,000 at a time, at most AUDIT_VIEW_SCAN events. An organization's stored seqs are dense from
 * its first, so the page that holds a seq is found by arithmetic. `next`: where older events
 * continue, when some are left unread.
 */
async function newestMatching(trail: NonNullable<ResultsPageSource["audit"]>, organization: string, filters: AuditFilters, before: number | undefined) {
  const first = await trail.list(organization, { page: { number: 1, size: 1 } });
  const firstSeq = first.items[0]?.seq ?? 1;
  // Positions (0 = the first stored event) still to read, newest first: below `before`'s.
  const end = Math.min(first.total, before === undefined ? first.total : Math.max(0, before - firstSeq));
  const rows: AuditEntry[] = [];
  let events = 0;
  let position = end;
  while (position > 0 && rows.length < AUDIT_VIEW_ROWS && events < AUDIT_VIEW_SCAN) {
    const number = Math.floor((position - 1) / AUDIT_PAGE) + 1;
    const { items } = await trail.list(organization, { page: { number, size: AUDIT_PAGE } });
    const upto = position - (number - 1) * AUDIT_PAGE;
    for (const entry of items.slice(0, upto).reverse()) {
      events++;
      position--;
      if (matchesAudit(entry, filters)) rows.push(entry);
      if (rows.length >= AUDIT_VIEW_ROWS || events >= AUDIT_VIEW_SCAN) break;
    }
    if (items.length < upto) break; // pruned meanwhile: nothing older to read
  }
  // `complete`: the page is full or nothing older is left (else the scan's bound stopped it).
  return { rows, events, complete: position <= 0 || rows.length >= AUDIT_VIEW_ROWS, next: position > 0 ? firstSeq + position : undefined };
}
