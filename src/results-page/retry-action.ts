import { isApiError } from "../errors.js";
import type { Principal } from "../schemas/common.js";
import type { DeliveryStatus } from "../services/delivery-status.js";
import type { ResultsPageSource, RunTarget } from "./types.js";

/**
 * decision D31: "Retry now" on the run page, `POST <prefix>/runs/:run_id/results/:result_id/retry`.
 * The same service and the same permissions as the API action `POST /task-results/:id/actions/retry`
 * (`run-tasks:manage`, and `runs:read` on the run's workspace; 404 otherwise, D4). Its answer comes
 * back to the run page as a notice: a refusal (the API's 409) is a sentence there, never an error page.
 */

export const RETRY_PATH = /^\/runs\/([^/]+)\/results\/([^/]+)\/retry$/;

/** The notices the run page shows by `?notice=`: fixed sentences, so a link cannot put words on the page. */
export const NOTICES = {
  "retry-started": "Retry asked for: the next attempt starts now; reload the page for its answer.",
  "retry-under-way": "Not retried: an attempt is under way already; reload the page for its answer.",
  "retry-final": "Not retried: the result has already reached a final status.",
  "retry-accepted": "Not retried: the integration has accepted the request.",
  "retry-not-sent": "Not retried: the request has not been sent yet.",
  "retry-too-late": "Not retried: no further attempt may start before the deadline.",
  "retry-too-soon": "Not retried: this result was retried moments ago; wait a few seconds for that attempt's answer, then try again.",
} as const;
export type NoticeCode = keyof typeof NOTICES;

export function noticeOf(query: URLSearchParams): string | null {
  const code = query.get("notice");
  return code !== null && Object.hasOwn(NOTICES, code) ? NOTICES[code as NoticeCode] : null;
}

/** Why the service refused (409), read from the state right after: the words the page shows. */
export function refusalNotice(s: DeliveryStatus | null): NoticeCode {
  if (!s || !["pending", "running"].includes(s.resultStatus)) return "retry-final";
  if (s.resultStatus === "running" || s.delivered) return "retry-accepted";
  if (s.deadlineAt === null) return "retry-not-sent";
  if (s.underWay) return "retry-under-way";
  return "retry-too-late";
}

/** The caller may ask for a retry of this run's results: the API action's permissions (D21). */
export async function mayRetry(source: ResultsPageSource, principal: Principal, target: RunTarget): Promise<boolean> {
  const [manage, read] = await Promise.all([
    source.auth.authorize(principal, "run-tasks:manage", target),
    source.auth.authorize(principal, "runs:read", target),
  ]);
  return manage && read;
}

/**
 * Asks for the retry of `resultId` of `runId`: resolves the notice to show, or null when the run,
 * the result (of that run) or the permission is missing, which the page answers like a missing run.
 */
export async function retryResult(source: ResultsPageSource, principal: Principal, runId: string, resultId: string): Promise<NoticeCode | null> {
  const run = await source.runTasks.getRun(runId);
  if (!run) return null;
  const workspace = await source.directory.workspaces.get(run.workspaceId);
  const target: RunTarget = workspace
    ? { organization: run.organization, workspaceId: run.workspaceId, projectId: workspace.projectId }
    : { organization: run.organization, workspaceId: run.workspaceId };
  if (!(await mayRetry(source, principal, target))) return null;
  const result = await source.runTasks.getResult(resultId);
  if (!result || result.runId !== run.id) return null;
  try {
    await source.runTasks.retryDelivery(resultId);
    return "retry-started";
  } catch (error) {
    if (isApiError(error) && error.code === "conflict") return refusalNotice(await source.runTasks.deliveryStatus(resultId));
    if (isApiError(error) && error.code === "not-found") return null;
    // decision D33: one retry per result in a short window; a second press is a notice, not a 429 page.
    if (isApiError(error) && error.code === "too-many-requests") return "retry-too-soon";
    throw error;
  }
}
