import { severityLevelOf, toReadTags, type ReadTag } from "../domain/outcomes.js";
import type { TagEntry } from "../schemas/run-tasks.js";
import type { OutcomeView, TaskResultView, TaskStageView } from "../schemas/task-stage-views.js";
import type { OutcomeFilter, ResultModel, RunPageModel } from "./data.js";
import type { ResultAgentFacts } from "../services/pool-presence.js";
import { isAgentSide, isFailing, markOf, type DeliveryModel } from "./delivery.js";
import { deliverySection, type RetryForm } from "./delivery-view.js";
import { failingText } from "./delivery-words.js";
import { EXTERNAL_REL, html, raw, safeExternalHref, type Html } from "./escape.js";
import { layout, type Chrome } from "./layout.js";
import { MAX_BODY_CHARS, renderMarkdown } from "./markdown.js";
import { LEVEL_NAMES, renderTags } from "./tags.js";
import { time, timeText } from "./time.js";
import { notReached, notReachedText, runVerdict, STAGE_NAMES } from "./verdict.js";

/** The run page: stages, results and outcome tables. Every value from an integration goes through `html`. */

/**
 * Created, the `status-timestamps` (`<status>-at` keys, D9) and updated, in time order, each
 * instant shown once: events at the same displayed second share one line
 * (`running, failed 12:00:01`), and `created` is left out when it is the run's own creation time,
 * already in the page's header (stages and results are created with their run).
 */
function timestamps(item: { statusTimestamps: Record<string, string>; createdAt: string; updatedAt: string }, runCreatedAt: string): Html {
  const events: [string, string][] = [
    ["created", item.createdAt],
    ...Object.entries(item.statusTimestamps).map(([key, at]): [string, string] => [key.replace(/-at$/, "").replace(/_/g, " "), at]),
    ["updated", item.updatedAt],
  ];
  const ordered = events
    // By the displayed second, then in lifecycle order (created, statuses as recorded, updated).
    .map(([label, at], i) => ({ label, at, i, s: Math.floor(Date.parse(at) / 1000) }))
    .sort((a, b) => (Number.isNaN(a.s) || Number.isNaN(b.s) ? a.i - b.i : a.s - b.s || a.i - b.i));
  const lines: { labels: string[]; at: string }[] = [];
  const runCreated = timeText(runCreatedAt);
  for (const event of ordered) {
    const shown = timeText(event.at);
    const last = lines.at(-1);
    if (last && timeText(last.at) === shown) {
      if (event.label !== "updated") last.labels.push(event.label);
    } else if (event.label !== "created" || shown !== runCreated) lines.push({ labels: [event.label], at: event.at });
  }
  return html`<ul class="times">
${lines.filter((l) => l.labels.length > 0).map((l) => html`<li>${l.labels.join(", ")} ${time(l.at)}</li>`)}
</ul>`;
}

export const statusBadge = (status: string): Html => html`<span class="badge status-${status}">${status.replace(/_/g, " ")}</span>`;

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

/** How each result section is drawn: the filter state, the run's creation time, and the retry form of a result (D31). */
interface SectionContext {
  filtered: boolean;
  /** decision D47: what a stage the run never reached says instead of its times. */
  notReachedText: string;
  runCreatedAt: string;
  retry: (resultId: string) => RetryForm | null;
  /** decision D63: the caller manages the workspace's run tasks: it sees what integrations answered. */
  mayManage: boolean;
}

/**
 * decision D34: a pool result names its pool and the agent that carried it (by its name, the id on
 * hover), or says it waits for an agent of the pool and since when none has been connected.
 */
function agentLine(facts: ResultAgentFacts): Html {
  if (facts.waiting) return html`<p class="agent waiting">${facts.waiting[0]!.toUpperCase()}${facts.waiting.slice(1)}.</p>`;
  const pool = html`agent pool <span title="${facts.poolId}">${facts.poolName ?? facts.poolId}</span>`;
  const agent = facts.agentId ? html`, agent <span class="mono" title="${facts.agentId}">${facts.agentName ?? facts.agentId}</span>` : null;
  return html`<p class="agent">Through ${pool}${agent}.</p>`;
}

/** decision D63: the integrations' answers only for whoever manages run tasks (who may also retry). */
const answersFor = (delivery: DeliveryModel, shown: boolean): DeliveryModel =>
  shown ? delivery : { ...delivery, answersHidden: true, attempts: delivery.attempts.map((a) => ({ ...a, excerpt: null, excerptTruncated: false })) };

function resultSection(model: ResultModel, { filtered, runCreatedAt, retry, mayManage }: SectionContext): Html {
  const r: TaskResultView = model.result;
  return html`<article class="result" id="result-${r.id}">
<div class="result-head"><h3>${r.taskName}</h3>
<span class="badge level-${r.enforcementLevel}">${r.enforcementLevel}</span>${statusBadge(r.status)}</div>
${r.message ? html`<p class="message">${r.message}</p>` : null}
${model.agent ? agentLine(model.agent) : null}
${r.url ? html`<p>More information: ${externalLink(r.url, r.url)}</p>` : null}
${model.delivery ? deliverySection(answersFor(model.delivery, mayManage), retry(r.id)) : null}
${timestamps(r, runCreatedAt)}
${outcomesTable(model, filtered)}
</article>`;
}

function stageSection(stage: TaskStageView, results: ResultModel[], context: SectionContext): Html {
  return html`<section class="card stage" id="stage-${stage.id}">
<div class="stage-head"><h2>${STAGE_NAMES[stage.stage]} stage</h2>${statusBadge(stage.status)}${
    stage.overridden ? html`<span class="badge status-awaiting_override">overridden</span>` : null
  }</div>
${notReached(stage) ? html`<p class="not-reached">${context.notReachedText}</p>` : timestamps(stage, context.runCreatedAt)}
${results.length === 0 ? html`<p class="empty">No run tasks in this stage.</p>` : results.map((m) => resultSection(m, context))}
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

/** The path of a workspace's page, the shape of `workspace_app_url` (D25). */
export const workspacePath = (chrome: Chrome, organization: string, workspaceName: string): string =>
  `${chrome.prefix}/${encodeURIComponent(organization)}/${encodeURIComponent(workspaceName)}`;

/** `action`: the path the page was opened at, so filtering keeps the URL the reader came by. */
export function runPage(chrome: Chrome, model: RunPageModel, action = `${chrome.prefix}/runs/${encodeURIComponent(model.run.id)}`): string {
  const { run, workspace } = model;
  const filtered = model.filter.severity !== null || model.filter.status !== null;
  // decision D34: a running stage whose result waits for an agent says what it waits for.
  const waiting = model.stages.flatMap((s) => s.results).find((m) => m.agent?.waiting)?.agent?.waiting;
  const verdict = runVerdict(model.stages.map((s) => s.stage), waiting ?? undefined);
  // decision D31: the button posts to the result's retry path and comes back to this page's path.
  const retry = (resultId: string): RetryForm | null =>
    model.mayRetry ? { action: `${chrome.prefix}/runs/${encodeURIComponent(run.id)}/results/${encodeURIComponent(resultId)}/retry`, back: action } : null;
  const context: SectionContext = { filtered, runCreatedAt: run.createdAt, retry, mayManage: model.mayRetry, notReachedText: notReachedText(model.stages.map((s) => s.stage)) };
  // decision D31: a stage that waits on a failing integration says so in the verdict, not only below.
  const failing = model.stages.flatMap((s) => s.results.flatMap((m) => (m.delivery && isFailing(m.delivery.state) ? [{ taskName: m.result.taskName, state: markOf(m.delivery.state, m.delivery.noAgent, m.delivery.lastError) }] : [])));
  const where = workspace
    ? html`<a href="${workspacePath(chrome, run.organization, workspace.name)}">${run.organization} / ${workspace.name}</a>`
    : html`${run.organization} / ${run.workspaceId}`;
  return layout(chrome, `Run ${run.id}`, html`<h1>Run task results</h1>
<p class="run-meta"><span class="mono">${run.id}</span><span>${where}</span>${
    run.message ? html`<span>${run.message}</span>` : null
  }<span>created ${time(run.createdAt)}</span></p>
<p class="verdict status-${verdict.tone}" role="status">${verdict.text}${failing.length > 0 ? ` ${failing.every(isAgentSide) ? "Waiting on agents" : "Failing integration"}: ${failingText(failing)}.` : ""}</p>
${model.notice ? html`<p class="notice" role="status">${model.notice}</p>` : null}
${filterForm(action, model)}
${model.stages.length === 0 ? html`<p class="empty card">This run has no run task stages.</p>` : model.stages.map((s) => stageSection(s.stage, s.results, context))}`);
}
