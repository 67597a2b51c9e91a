import type { DeliveryAttemptRecord } from "../schemas/delivery-attempts.js";
import { ATTEMPT_LIMITS } from "../schemas/delivery-attempts.js";
import type { DeliveryModel } from "./delivery.js";
import { attemptOutcome, deliverySentence } from "./delivery-words.js";
import { html, type Html } from "./escape.js";
import { time } from "./time.js";

/**
 * decision D31 on the run page: a failing integration's sentence, its attempts and their answers
 * behind a Details toggle (a `<details>` element: no script), and "Retry now" for whoever may.
 */

/** Where the "Retry now" form posts, and the run page it comes back to. Null: no button. */
export interface RetryForm {
  action: string;
  back: string;
}

/** `85 ms`, `1.2 s`, `10 s`. */
export const durationText = (ms: number): string => (ms < 1000 ? `${ms} ms` : ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`);

function excerpt(a: DeliveryAttemptRecord, hidden: boolean): Html {
  if (hidden) return html`<span class="muted">shown to who manages run tasks</span>`;
  if (a.excerpt === null || a.excerpt === "") return html`<span class="muted">no text</span>`;
  const cut = a.excerptTruncated ? html`<span class="muted">cut after ${ATTEMPT_LIMITS.excerptBytes / 1024} KiB</span>` : null;
  return html`<pre class="excerpt">${a.excerpt}</pre>${cut}`;
}

function attemptRow(a: DeliveryAttemptRecord, names: Record<string, string>, hidden: boolean): Html {
  return html`<tr data-outcome="${a.outcome}">
<td>${a.number}</td>
<td>${time(a.startedAt)}</td>
<td>${durationText(a.durationMs)}</td>
<td>${attemptOutcome(a)}${a.errorCode ? html` <span class="mono">${a.errorCode}</span>` : null}${a.agentId ? html` <span class="muted">through agent <span class="mono" title="${a.agentId}">${names[a.agentId] ?? a.agentId}</span></span>` : null}</td>
<td class="answer">${excerpt(a, hidden)}</td>
</tr>`;
}

function attemptsTable(model: DeliveryModel): Html {
  if (model.attempts.length === 0 && model.noAgent) return html`<p class="empty">No attempt: no agent of the pool took the request.</p>`;
  if (model.attempts.length === 0) return html`<p class="empty">No attempt is recorded (attempts are kept for a limited time).</p>`;
  const kept = model.total > model.attempts.length ? `The newest ${model.attempts.length} of ${model.total} attempts` : `${model.attempts.length === 1 ? "One attempt" : `${model.attempts.length} attempts`}`;
  return html`<table class="attempts">
<caption>${kept}, newest first, with what the integration answered</caption>
<thead><tr><th scope="col">Attempt</th><th scope="col">Started</th><th scope="col">Took</th><th scope="col">Outcome</th><th scope="col">Answer</th></tr></thead>
<tbody>
${model.attempts.map((a) => attemptRow(a, model.agentNames ?? {}, model.answersHidden === true))}
</tbody>
</table>`;
}

function retryButton(form: RetryForm): Html {
  return html`<form method="post" action="${form.action}" class="retry">
<input type="hidden" name="back" value="${form.back}">
<button type="submit" class="primary">Retry now</button>
</form>`;
}

/** The delivery part of a result; `retry` only when the caller may resend and a retry can start now. */
export function deliverySection(model: DeliveryModel, retry: RetryForm | null): Html {
  const tone = model.state.kind === "ended" ? model.state.status : model.state.kind === "handed" ? "pending" : "retrying";
  const canRetry = model.state.kind === "retrying" && !model.state.underWay;
  return html`<div class="delivery">
<p class="delivery-state status-${tone}">${deliverySentence(model)}</p>
${canRetry && retry ? retryButton(retry) : null}
<details class="attempts"><summary>Details: attempts and answers</summary>
${attemptsTable(model)}
</details>
</div>`;
}
