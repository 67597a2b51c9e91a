import { severityLevelOf, toReadTags, type ReadTag } from "../domain/outcomes.js";
import type { TagEntry } from "../schemas/run-tasks.js";
import type { OutcomeView, TaskResultView, TaskStageView } from "../schemas/task-stage-views.js";
import type { OutcomeFilter, ResultModel, RunPageModel } from "./data.js";
import { EXTERNAL_REL, html, raw, safeExternalHref, type Html } from "./escape.js";
import { layout, type Chrome } from "./layout.js";
import { MAX_BODY_CHARS, renderMarkdown } from "./markdown.js";
import { LEVEL_NAMES, renderTags } from "./tags.js";

/** The run page: stages, results and outcome tables. Every value from an integration goes through `html`. */

const STAGE_NAMES = { pre_plan: "Pre-plan", post_plan: "Post-plan", pre_apply: "Pre-apply", post_apply: "Post-apply" } as const;

/** `2026-01-01T00:00:00.000Z` as `2026-01-01 00:00:00 UTC` inside a `<time>`. */
function time(iso: string): Html {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return html`<span>${iso}</span>`;
  const text = new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  return html`<time datetime="${iso}">${text}</time>`;
}

/** `status-timestamps` (`<status>-at` keys, D9) in time order, then created and updated. */
function timestamps(item: { statusTimestamps: Record<string, string>; createdAt: string; updatedAt: string }): Html {
  const entries = Object.entries(item.statusTimestamps).sort(([, a], [, b]) => Date.parse(a) - Date.parse(b));
  return html`<ul class="times">
<li>created ${time(item.createdAt)}</li>
${entries.map(([key, at]) => html`<li>${key.replace(/-at$/, "").replace(/_/g, " ")} ${time(at)}</li>`)}
<li>updated ${time(item.updatedAt)}</li>
</ul>`;
}

const statusBadge = (status: string): Html => html`<span class="badge status-${status}">${status.replace(/_/g, " ")}</span>`;

/** A link to an integration's page, or a note when its URL is not http(s) (never an href). */
function externalLink(url: string | null, text: string): Html | null {
  if (url === null || url === "") return null;
  const href = safeExternalHref(url);
  if (href === null) return html`<span class="muted" title="Only http and https links are shown">link withheld</span>`;
  return html`<a href="${href}" rel="${EXTERNAL_REL}">${text}</a>`;
}

/** The tags split into the enriched `severity` and `status` keys (any case, D18) and the rest. */
function splitTags(tags: OutcomeView["tags"]): { severity: TagEntry[]; status: TagEntry[]; others: ReadTag[] } {
  const split = { severity: [] as TagEntry[], status: [] as TagEntry[], others: [] as ReadTag[] };
  let seenSeverity = false;
  let seenStatus = false;
  for (const tag of toReadTags(tags)) {
    const key = tag.label.toLowerCase();
    // The first key of each name is the enriched one, as in the API (findTag).
    if (key === "severity" && !seenSeverity) [seenSeverity, split.severity] = [true, tag.value];
    else if (key === "status" && !seenStatus) [seenStatus, split.status] = [true, tag.value];
    else split.others.push(tag);
  }
  return split;
}

function outcomeRow(outcome: OutcomeView): Html {
  const tags = splitTags(outcome.tags);
  const level = severityLevelOf(outcome.tags);
  const body = outcome.body === null || outcome.body === "" ? null : renderMarkdown(outcome.body);
  const dash = html`<span class="muted">—</span>`;
  return html`<tr data-severity="${level}">
<td class="severity">${tags.severity.length > 0 ? renderTags(tags.severity) : dash}</td>
<td class="status">${tags.status.length > 0 ? renderTags(tags.status) : dash}</td>
<td class="description">${outcome.description}<span class="outcome-id mono">${outcome.outcomeId}</span>${
    body
      ? html`<details><summary>Details</summary><div class="markdown">${raw(body.html)}${
          body.truncated ? html`<p class="notice">Cut after ${MAX_BODY_CHARS.toLocaleString("en")} characters.</p>` : null
        }</div></details>`
      : null
  }</td>
<td class="tags">${tags.others.length > 0 ? tags.others.map((t) => html`<span class="tag-group"><span class="tag-key">${t.label}</span>${renderTags(t.value)}</span>`) : dash}</td>
<td class="link">${externalLink(outcome.url, "Open") ?? dash}</td>
</tr>`;
}

function outcomesTable(model: ResultModel, filtered: boolean): Html {
  const { shown, loaded, total, result } = model;
  if (total === 0) return html`<p class="empty">No outcomes reported.</p>`;
  const scope = loaded < total ? `the ${loaded} most severe of ${total} outcomes` : `${total} outcome${total === 1 ? "" : "s"}`;
  const caption = `${filtered ? `${shown.length} of ${scope} match the filter` : scope[0]!.toUpperCase() + scope.slice(1)}, most severe first`;
  if (shown.length === 0) return html`<p class="empty">No outcome of ${result.taskName} matches the filter (${loaded} loaded).</p>`;
  return html`<table class="outcomes">
<caption>${caption}</caption>
<thead><tr><th scope="col">Severity</th><th scope="col">Status</th><th scope="col">Outcome</th><th scope="col">Tags</th><th scope="col">Link</th></tr></thead>
<tbody>
${shown.map(outcomeRow)}
</tbody>
</table>`;
}

function resultSection(model: ResultModel, filtered: boolean): Html {
  const r: TaskResultView = model.result;
  return html`<article class="result" id="result-${r.id}">
<div class="result-head"><h3>${r.taskName}</h3>
<span class="badge level-${r.enforcementLevel}">${r.enforcementLevel}</span>${statusBadge(r.status)}</div>
${r.message ? html`<p class="message">${r.message}</p>` : null}
${r.url ? html`<p>More information: ${externalLink(r.url, r.url)}</p>` : null}
${timestamps(r)}
${outcomesTable(model, filtered)}
</article>`;
}

function stageSection(stage: TaskStageView, results: ResultModel[], filtered: boolean): Html {
  return html`<section class="card stage" id="stage-${stage.id}">
<div class="stage-head"><h2>${STAGE_NAMES[stage.stage]} stage</h2>${statusBadge(stage.status)}${
    stage.overridden ? html`<span class="badge status-awaiting_override">overridden</span>` : null
  }</div>
${timestamps(stage)}
${results.length === 0 ? html`<p class="empty">No run tasks in this stage.</p>` : results.map((m) => resultSection(m, filtered))}
</section>`;
}

function select(name: string, label: string, choices: TagEntry[], current: string | null): Html {
  const known = current === null || choices.some((c) => c.label.toLowerCase() === current.toLowerCase());
  const options = known ? choices : [...choices, { label: current, level: "none" as const }];
  return html`<label>${label}<select name="${name}">
<option value="">All</option>
${options.map((c) => {
  const selected = current !== null && c.label.toLowerCase() === current.toLowerCase();
  const suffix = c.level === "none" ? "" : ` (${LEVEL_NAMES[c.level].toLowerCase()})`;
  return html`<option value="${c.label}"${selected ? raw(" selected") : null}>${c.label}${suffix}</option>`;
})}
</select></label>`;
}

function filterForm(action: string, model: RunPageModel): Html {
  const f: OutcomeFilter = model.filter;
  return html`<section class="card">
<form method="get" action="${action}" class="filters" aria-label="Filter outcomes">
${select("severity", "Severity", model.choices.severity, f.severity)}
${select("status", "Status", model.choices.status, f.status)}
<button type="submit" class="primary">Apply</button>
${f.severity !== null || f.status !== null ? html`<a href="${action}">Clear filters</a>` : null}
</form>
</section>`;
}

export function runPage(chrome: Chrome, model: RunPageModel): string {
  const { run, workspace } = model;
  const action = `${chrome.prefix}/runs/${encodeURIComponent(run.id)}`;
  const filtered = model.filter.severity !== null || model.filter.status !== null;
  return layout(chrome, `Run ${run.id}`, html`<h1>Run task results</h1>
<p class="run-meta"><span class="mono">${run.id}</span><span>${run.organization} / ${workspace?.name ?? run.workspaceId}</span>${
    run.message ? html`<span>${run.message}</span>` : null
  }<span>created ${time(run.createdAt)}</span></p>
${filterForm(action, model)}
${model.stages.length === 0 ? html`<p class="empty card">This run has no run task stages.</p>` : model.stages.map((s) => stageSection(s.stage, s.results, filtered))}`);
}
