import type { Workspace } from "../schemas/directory.js";
import { html } from "./escape.js";
import { layout, type Chrome } from "./layout.js";
import { workspacePath } from "./render.js";
import { runTable, type RunRow } from "./run-list.js";
import { failingIntegrations } from "./delivery.js";
import type { ResultsPageSource } from "./types.js";

/** The workspace page (D25, the target of `workspace_app_url`): its runs, newest first, paged. */

export const RUNS_PER_PAGE = 20;
/** The same bound as the API's `page[number]` (D26). */
const MAX_PAGE = 1_000_000;

export interface WorkspacePageModel {
  workspace: Workspace;
  runs: Omit<RunRow, "workspace">[];
  page: number;
  total: number;
}

/** `?page=`: absent is 1; anything but an integer from 1 to 1,000,000 is null (a 400). */
export function parsePageNumber(query: URLSearchParams): number | null {
  const raw = query.get("page");
  if (raw === null || raw === "") return 1;
  if (!/^[0-9]{1,7}$/.test(raw)) return null;
  const n = Number(raw);
  return n >= 1 && n <= MAX_PAGE ? n : null;
}

/**
 * The workspace of `organization` named `name` among those the caller may read (`readable`), or
 * null. Names are not unique in the directory, so of several the first by id wins.
 */
export async function findWorkspace(
  source: ResultsPageSource,
  organization: string,
  name: string,
  readable: (workspace: Workspace) => Promise<boolean>,
): Promise<Workspace | null> {
  for (const workspace of await source.directory.workspaces.list(organization)) {
    if (workspace.name === name && workspace.organization === organization && (await readable(workspace))) return workspace;
  }
  return null;
}

export async function loadWorkspacePage(source: ResultsPageSource, workspace: Workspace, page: number): Promise<WorkspacePageModel> {
  const { items, total } = await source.runTasks.listRuns(workspace.id, { offset: (page - 1) * RUNS_PER_PAGE, limit: RUNS_PER_PAGE });
  const runs = await Promise.all(
    items.map(async (run) => {
      const stages = (await source.runTasks.listStages(run.id)).items;
      return { run, stages, failing: await failingIntegrations(source, stages) };
    }),
  );
  return { workspace, runs, page, total };
}

export function workspacePage(chrome: Chrome, model: WorkspacePageModel): string {
  const { workspace, page, total } = model;
  const base = workspacePath(chrome, workspace.organization, workspace.name);
  const pages = Math.max(1, Math.ceil(total / RUNS_PER_PAGE));
  const first = (page - 1) * RUNS_PER_PAGE + 1;
  const summary =
    model.runs.length > 0
      ? `Runs ${first} to ${first + model.runs.length - 1} of ${total}, newest first`
      : total === 0
        ? "No runs yet."
        : `No runs on page ${page}; there ${pages === 1 ? "is 1 page" : `are ${pages} pages`}.`;
  const link = (n: number, text: string) => html`<a href="${base}${n === 1 ? "" : `?page=${n}`}" rel="${n < page ? "prev" : "next"}">${text}</a>`;
  return layout(chrome, `${workspace.organization} / ${workspace.name}`, html`<h1>${workspace.name}</h1>
<p class="run-meta"><span>${workspace.organization}</span><span class="mono">${workspace.id}</span></p>
<section class="card">
<h2>Runs</h2>
${
  model.runs.length === 0
    ? html`<p class="empty">${summary}</p>`
    : runTable(chrome, model.runs.map((r) => ({ ...r, workspace })), summary)
}
<nav class="pager" aria-label="Pages">${page > 1 ? link(Math.min(page - 1, pages), "Newer runs") : null}<span>Page ${page} of ${pages}</span>${
    page < pages ? link(page + 1, "Older runs") : null
  }</nav>
</section>`);
}
