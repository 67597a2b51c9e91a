import { statusText } from "../delivery/failure-reason.js";
import type { DeliveryAttemptRecord } from "../schemas/delivery-attempts.js";
import type { DeliveryModel, FailingIntegration } from "./delivery.js";
import { html, type Html } from "./escape.js";
import { clockTime } from "./time.js";

/**
 * decision D31 in words: "Retrying: attempt 5 of at most 17, last answer 401 Unauthorized, next
 * try in 40 s, gives up at 14:52:07 UTC." Every number comes from the stored state and the retry
 * schedule, none is written here.
 */

/** What one attempt came to: `401 Unauthorized`, `no answer: the connection failed (ECONNREFUSED)`. */
export function attemptOutcome(a: Pick<DeliveryAttemptRecord, "outcome" | "status" | "detail">): string {
  if (a.outcome === "answered" && a.status !== null) return statusText(a.status);
  // decision D58: handed to an agent (the row names it), its report not in yet.
  if (a.outcome === "under-way") return "under way: no report yet";
  return a.outcome === "skipped" ? `not sent: ${a.detail}` : `no answer: ${a.detail}`;
}

/** The newest attempt's answer, else the delivery's last error; null when neither is known. */
function lastAnswer(model: DeliveryModel): string | null {
  // decision D58: an attempt under way has no answer yet; the one before it speaks.
  const newest = model.attempts.find((a) => a.outcome !== "under-way");
  if (newest?.outcome === "answered" && newest.status !== null) return `last answer ${statusText(newest.status)}`;
  if (newest) return newest.outcome === "skipped" ? `last try not sent: ${newest.detail}` : `last try: ${newest.detail}`;
  return model.lastError ? `last error: ${model.lastError}` : null;
}

/** `40 s`, `3 min 5 s`, `1 h 2 min`: a wait, rounded up to the second. */
export function waitText(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  const m = Math.floor(s / 60);
  return m % 60 === 0 ? `${m / 60} h` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;
const join = (parts: (Html | string | null)[]): Html => {
  const kept = parts.filter((p): p is Html | string => p !== null);
  return html`${kept.map((p, i) => html`${i > 0 ? ", " : ""}${p}`)}`;
};

/** The one sentence that says where a failing integration's request stands. */
export function deliverySentence(model: DeliveryModel): Html {
  const { state, now } = model;
  const last = lastAnswer(model);
  switch (state.kind) {
    case "retrying": {
      const wait = Date.parse(state.nextAt) - Date.parse(now);
      const attempt = state.underWay
        ? `attempt ${state.attempt + 1} of at most ${state.bound} is under way`
        : `attempt ${state.attempt} of at most ${state.bound}`;
      const next = state.underWay ? null : wait > 0 ? `next try in ${waitText(wait)}` : "next try due now";
      return html`Retrying: ${join([attempt, last, next, html`gives up at ${clockTime(state.deadlineAt, now)}`])}.`;
    }
    case "handed": {
      // decision D58: the request went to an agent; what it sent is known only from its report.
      const a = model.attempts[0]!;
      const agent = a.agentName ?? (a.agentId ? (model.agentNames?.[a.agentId] ?? a.agentId) : "an agent");
      return html`Under way: attempt ${state.attempt} was handed to agent ${agent} at ${clockTime(a.startedAt, now)}; no report from it yet.`;
    }
    case "exhausted":
      return html`Not delivered: attempt ${state.attempt} was the last one before the deadline${last ? `, ${last}` : ""}; the result becomes unreachable at ${clockTime(state.deadlineAt, now)}.`;
    case "ended": {
      // decision D34: no agent of the pool was there: the integration was never sent anything.
      if (model.noAgent) return html`Unreachable: no agent of the run task's pool took the request before the deadline; nothing was sent to the integration.`;
      const count = model.total > 0 ? `${plural(model.attempts[0]?.number ?? model.total, "attempt")} made` : null;
      // decision D16: a result never accepted (no 200, no callback) ends unreachable; one accepted
      // that sent no final status in time ends errored. Nothing else makes either.
      const why = state.status === "unreachable"
        ? "the integration never accepted the request (an answer of 200) before the deadline"
        : "the integration accepted the request but reported no final result before the deadline";
      return html`${state.status === "unreachable" ? "Unreachable" : "Errored"}: ${join([why, count, last])}.`;
    }
  }
}

const STATE_WORDS: Record<FailingIntegration["state"], string> = {
  retrying: "retrying",
  exhausted: "not delivered",
  unreachable: "unreachable",
  errored: "errored",
  "no-agent": "not sent (no agent of its pool)",
  "agent-lost": "retrying (its agent did not report)",
};

/** `scanner retrying, linter unreachable`: the failing integrations of a run, for a list or a verdict. */
export const failingText = (failing: readonly FailingIntegration[]): string =>
  failing.map((f) => `${f.taskName} ${STATE_WORDS[f.state]}`).join(", ");
