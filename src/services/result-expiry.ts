import { TIMED_OUT_MESSAGE, transitionResult, type ResultEvent } from "../domain/stage-machine.js";
import type { TaskResultRecord } from "../schemas/run-task-records.js";
import type { ServiceContext } from "./context.js";
import type { TaskStageService } from "./task-stages.js";
import { noAgentMessage, readPoolPresence } from "./pool-presence.js";
import { noReportDetail } from "../storage/outbox-rules.js";

/** decision D58: the no-report words of a result's newest attempt when an agent took it and it is still under way. */
async function unclosedHandOut(s: ServiceContext["storage"], resultId: string): Promise<string | null> {
  const [newest] = (await s.deliveryAttempts.list(resultId, { offset: 0, limit: 1 })).items;
  return newest?.outcome === "under-way" ? noReportDetail(newest.agentName ?? newest.agentId ?? "") : null;
}

/** Compare-and-set retries before giving up under extreme contention. */
const MAX_ATTEMPTS = 16;

/** The deadline sweep's step on one result (decision D16), and the guarded move it writes with. */
export function createResultExpiry(ctx: ServiceContext, stages: Pick<TaskStageService, "emitResult">) {
  const s = ctx.storage;

  /** Applies a result event with compare-and-set retries; resolves the stored row, or null when nothing changed. */
  async function moveResult(id: string, event: ResultEvent, message?: (r: TaskResultRecord) => string | null, still?: (r: TaskResultRecord, now: Date) => boolean) {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await s.taskResults.get(id);
      const now = ctx.now();
      if (!current || (still && !still(current, now))) return null;
      const t = transitionResult(current, event, now);
      if (!t.ok || !t.changed) return null;
      const next: TaskResultRecord = {
        ...current,
        status: t.status,
        statusTimestamps: t.statusTimestamps,
        message: message ? message(current) : current.message,
        version: current.version + 1,
        updatedAt: now.toISOString(),
      };
      const stored = await s.taskResults.transition(id, { statuses: [current.status], version: current.version }, next);
      if (stored) {
        stages.emitResult(current, stored);
        return stored;
      }
    }
    return null;
  }

  /**
   * decision D16: a result past its deadline becomes `errored` (`Task result timed out.`) when it
   * was delivered or called back, `unreachable` when it never got a 200. Resolves the stored row,
   * or null when it no longer applies (a callback won or moved the deadline).
   */
  async function expire(result: TaskResultRecord): Promise<TaskResultRecord | null> {
    const rows = await s.taskDeliveries.listByResult(result.id);
    const pool = result.agentPoolId ?? null;
    // decision D58: an attempt an agent took whose host died before closing it (no claim since).
    const handed = pool !== null && rows.every((r) => r.attempt === 0) ? await unclosedHandOut(s, result.id) : null;
    const lastError = handed ?? rows.map((r) => r.lastError).filter((e) => e !== null).at(-1);
    // decision D34: a pool's request no agent ever took was never sent: the message says so, not
    // that the integration refused it.
    const untaken = pool !== null && handed === null && rows.every((r) => r.attempt === 0) ? noAgentMessage(await readPoolPresence(s, pool, ctx.now()), pool) : null;
    const message = (r: TaskResultRecord) =>
      r.status === "running" ? TIMED_OUT_MESSAGE : (untaken ?? `Task request was not delivered before the deadline${lastError ? `: ${lastError}` : ""}.`);
    const due = (r: TaskResultRecord, now: Date) => r.deadlineAt !== null && now.getTime() >= Date.parse(r.deadlineAt);
    return moveResult(result.id, { type: "deadline" }, message, due);
  }

  /**
   * A pending result whose request can never be sent (its run task was deleted) ends `unreachable`
   * now with `message`, rather than at its deadline (found from outside).
   */
  const giveUp = (id: string, message: string): Promise<TaskResultRecord | null> => moveResult(id, { type: "deadline" }, () => message);

  return { expire, giveUp };
}
