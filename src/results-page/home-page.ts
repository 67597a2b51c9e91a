import { html, type Html } from "./escape.js";
import type { OrganizationModel, OverviewModel, WorkspaceSummary } from "./home.js";
import { layout, type Chrome } from "./layout.js";
import { workspacePath } from "./render.js";
import { time } from "./time.js";
import { runPath, runTable, type RunRow } from "./run-list.js";

/** The home and an organization's page: readable workspaces, recent runs, a run by id. */

export const organizationPath = (chrome: Chrome, organization: string): string => `${chrome.prefix}/${encodeURIComponent(organization)}`;

const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? "" : "s"}`;

function workspaceRow(chrome: Chrome, { workspace, runs, latest }: WorkspaceSummary): Html {
  return html`<tr>
<td><a href="${workspacePath(chrome, workspace.organization, workspace.name)}">${workspace.name}</a></td>
<td>${runs}</td>
<td>${latest ? html`<a class="mono" href="${runPath(chrome, { run: latest, workspace })}">${latest.id}</a> ${time(latest.createdAt)}` : html`<span class="muted">no runs yet</span>`}</td>
</tr>`;
}

function workspaceTable(chrome: Chrome, organization: OrganizationModel): Html {
  return html`<table class="run-list workspaces">
<caption>${count(organization.workspaces.length, "workspace")} you may read, by name</caption>
<thead><tr><th scope="col">Workspace</th><th scope="col">Runs</th><th scope="col">Newest run</th></tr></thead>
<tbody>
${organization.workspaces.map((w) => workspaceRow(chrome, w))}
</tbody>
</table>`;
}

function recentRuns(chrome: Chrome, recent: readonly RunRow[]): Html {
  return html`<section class="card">
<h2>Recent runs</h2>
${recent.length === 0 ? html`<p class="empty">No runs yet.</p>` : runTable(chrome, recent, `The ${count(recent.length, "newest run")} of these workspaces, newest first`, true)}
</section>`;
}

function openRunForm(chrome: Chrome): Html {
  return html`<section class="card">
<h2>Open a run</h2>
<form method="get" action="${chrome.prefix}/runs" class="filters">
<label>Run id <input type="text" name="run_id" required placeholder="run-…" spellcheck="false"></label>
<button type="submit" class="primary">Open</button>
</form>
</section>`;
}

export function homePage(chrome: Chrome, model: OverviewModel): string {
  const organizations =
    model.organizations.length === 0
      ? html`<section class="card"><p class="empty">This credential may not read the runs of any workspace.</p></section>`
      : model.organizations.map(
          (o) => html`<section class="card">
<h2><a href="${organizationPath(chrome, o.name)}">${o.name}</a></h2>
${workspaceTable(chrome, o)}
</section>`,
        );
  return layout(chrome, "Run task results", html`<h1>Run task results</h1>
${organizations}
${model.organizations.length === 0 ? null : recentRuns(chrome, model.recent)}
${openRunForm(chrome)}`);
}

export function organizationPage(chrome: Chrome, organization: OrganizationModel, recent: readonly RunRow[], auditLink = false): string {
  const audit = auditLink ? html`<span><a href="${organizationPath(chrome, organization.name)}/-/audit">Audit trail</a></span>` : null;
  return layout(chrome, organization.name, html`<h1>${organization.name}</h1>
<p class="run-meta"><span>Organization</span><span>${count(organization.workspaces.length, "workspace")} you may read</span>${audit}</p>
<section class="card">
<h2>Workspaces</h2>
${workspaceTable(chrome, organization)}
</section>
${recentRuns(chrome, recent)}`);
}
