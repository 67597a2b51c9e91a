import type { Workspace } from "../schemas/directory.js";
import type { RunRecord } from "../schemas/run-task-records.js";
import type { TaskStageView } from "../schemas/task-stage-views.js";
import { html, type Html } from "./escape.js";
import { isAgentSide, type FailingIntegration } from "./delivery.js";
import { failingText } from "./delivery-words.js";
import type { Chrome } from "./layout.js";
import { statusBadge, workspacePath } from "./render.js";
import { time } from "./time.js";
import { runVerdict, STAGE_NAMES } from "./verdict.js";

/** The table of runs that the workspace page, the home and an organization's page share. */

export interface RunRow {
  run: RunRecord;
  workspace: Workspace;
  stages: TaskStageView[];
  /** decision D31: its integrations that are being retried or ended unreachable or errored. */
  failing: FailingIntegration[];
}

/** The run's page at the path of `run_app_url` (D25), so the header links back to its workspace. */
export const runPath = (chrome: Chrome, { run, workspace }: Pick<RunRow, "run" | "workspace">): string =>
  `${workspacePath(chrome, workspace.organization, workspace.name)}/runs/${encodeURIComponent(run.id)}`;

/** The mark of a run with failing integrations: a badge, and which ones in words (not by colour alone). */
function failingMark(failing: readonly FailingIntegration[]): Html | null {
  if (failing.length === 0) return null;
  // decision D34: a request no agent took was never sent: the integration is not the one failing.
  const badge = failing.every(isAgentSide) ? "no agent" : "integration failing";
  return html`<span class="failing"><span class="badge status-failing">${badge}</span> <span class="failing-names">${failingText(failing)}</span></span>`;
}

function runRow(chrome: Chrome, row: RunRow, withWorkspace: boolean): Html {
  const { run, workspace, stages } = row;
  const verdict = runVerdict(stages);
  return html`<tr>
<td><a class="mono" href="${runPath(chrome, row)}">${run.id}</a></td>
${withWorkspace ? html`<td><a href="${workspacePath(chrome, workspace.organization, workspace.name)}">${workspace.organization} / ${workspace.name}</a></td>\n` : null}<td>${run.message}</td>
<td>${time(run.createdAt)}</td>
<td class="stages">${
    stages.length === 0
      ? html`<span class="muted">no run task stages</span>`
      : stages.map((s) => html`<span class="stage-status">${STAGE_NAMES[s.stage]} ${statusBadge(s.status)}</span> `)
  }</td>
<td><span class="badge status-${verdict.tone}" title="${verdict.text}">${verdict.tone.replace(/_/g, " ")}</span>${failingMark(row.failing)}</td>
</tr>`;
}

/** `withWorkspace`: a column naming each run's workspace, for lists that span several. */
export function runTable(chrome: Chrome, rows: readonly RunRow[], caption: string, withWorkspace = false): Html {
  return html`<table class="run-list">
<caption>${caption}</caption>
<thead><tr><th scope="col">Run</th>${withWorkspace ? html`<th scope="col">Workspace</th>` : null}<th scope="col">Message</th><th scope="col">Created</th><th scope="col">Task stages</th><th scope="col">Verdict</th></tr></thead>
<tbody>
${rows.map((r) => runRow(chrome, r, withWorkspace))}
</tbody>
</table>`;
}
