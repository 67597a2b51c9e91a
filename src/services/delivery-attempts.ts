import { responseExcerpt, type Excerpt } from "../domain/response-excerpt.js";
import { isFinalResultStatus } from "../domain/stage-machine.js";
import { conflict, notFound, tooManyRequests } from "../errors.js";
import type { AttemptOutcomeKind, DeliveryAttemptRecord } from "../schemas/delivery-attempts.js";
import type { Page, PageRequest } from "../schemas/records.js";
import type { TaskResultRecord } from "../schemas/run-task-records.js";
import type { ServiceContext } from "./context.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import type { DeliveryAttempt } from "./delivery-request.js";
import { createKeyedLimiter } from "./keyed-limiter.js";

/**
 * decision D31: the attempt history of run task requests (what each attempt saw, kept with the
 * attempt's settlement), its retention, and "retry now" for a result that is being retried.
 */

/** What the dispatcher saw of one attempt, before it is recorded. */
export interface AttemptObservation {
  startedAt: Date;
  durationMs: number;
  outcome: AttemptOutcomeKind;
  status: number | null;
  errorCode: string | null;
  /** Why it counts as it does, in words (the delivery's `lastError` words, or `responded with 200`). */
  detail: string;
  /** decision D34: the agent that sent the request, when one did. */
  agentId?: string;
  /** decision D58: that agent's `--name` when it took the job (null: none given). */
  agentName?: string | null;
  /** decision D58: the id of the attempt's `under-way` record, which its end completes in place. */
  recordId?: string;
  /** The answer, when one came: the body as the egress read it (at most 64 KiB). */
  response?: { body: string; contentType: string | undefined; truncated: boolean };
}

/** The excerpt of an attempt's answer, cut and redacted with the attempt's own secrets (D31). */
export function excerptOf(attempt: DeliveryAttempt, seen: AttemptObservation): Excerpt {
  // Most answers have no body: the secrets (a parse of the payload) are read only for one that has.
  return seen.response && seen.response.body !== "" && attempt.ready ? responseExcerpt({ ...seen.response, secrets: attempt.secrets() }) : { text: null, truncated: false };
}

/** The stored form of an attempt, with its excerpt (by default the one `excerptOf` cuts). */
export function attemptRecord(ctx: Pick<ServiceContext, "newId">, attempt: DeliveryAttempt, seen: AttemptObservation, excerpt: Excerpt = excerptOf(attempt, seen)): DeliveryAttemptRecord {
  return {
    id: seen.recordId ?? ctx.newId("tda"),
    taskResultId: attempt.row.taskResultId,
    deliveryId: attempt.row.id,
    number: attempt.row.attempt + 1,
    startedAt: seen.startedAt.toISOString(),
    durationMs: Math.max(0, Math.round(seen.durationMs)),
    outcome: seen.outcome,
    status: seen.status,
    errorCode: seen.errorCode,
    detail: seen.detail,
    excerpt: excerpt.text,
    excerptTruncated: excerpt.truncated,
    agentId: seen.agentId ?? null,
    agentName: seen.agentName ?? null,
  };
}

/** Rows one prune removes; a sweep removes at most MAX_PRUNE_ROUNDS of them, the next sweep the rest. */
const PRUNE_BATCH = 500;
const MAX_PRUNE_ROUNDS = 20;

/**
 * decision D33: one "retry now" per result in this window (per process), however often the button
 * is pressed: an attempt started by a retry has its answer within the window as a rule, and an
 * integration that is failing is not hammered. Results remembered: the last 10,000 retried.
 */
export const RETRY_WINDOW_MS = 10_000;
const RETRY_RESULTS_KEPT = 10_000;

export function createDeliveryAttemptService(ctx: ServiceContext, settings: RunTaskSettings) {
  const s = ctx.storage;
  const dueListeners = new Set<() => void>();
  const retries = createKeyedLimiter({ perSecond: 1000 / RETRY_WINDOW_MS, burst: 1, maxKeys: RETRY_RESULTS_KEPT, now: () => ctx.now().getTime() });

  /** decision D16: why a result can take no further attempt now, or null when it may. */
  function refusal(result: Pick<TaskResultRecord, "status" | "deadlineAt">, now: Date): string | null {
    if (isFinalResultStatus(result.status)) return "The task result has already reached a final status; there is nothing to retry";
    if (result.status !== "pending") return "The task result is not being retried: the integration accepted its request";
    if (result.deadlineAt === null) return "The task result is not being retried: its request has not been sent yet";
    if (now.getTime() >= Date.parse(result.deadlineAt)) return `The task result is past its deadline (${result.deadlineAt}); no further attempt may start`;
    return null;
  }

  return {
    /** A result's attempts, newest first (at most 20 are kept). */
    list: (taskResultId: string, page: PageRequest): Promise<Page<DeliveryAttemptRecord>> => s.deliveryAttempts.list(taskResultId, page),

    /**
     * decision D31: the next attempt of a retrying result, now rather than at its backoff time
     * (D15), within the deadline rules of D16. 409 when the result is final, past its deadline,
     * not being retried, or has an attempt under way. Wakes this process's dispatchers; the
     * storage wakes the others' (D27).
     */
    async retryNow(taskResultId: string): Promise<void> {
      const result = await s.taskResults.get(taskResultId);
      if (!result) throw notFound();
      const turn = retries.peek(taskResultId);
      if (!turn.ok) throw tooManyRequests(`This task result was retried moments ago; retry again in ${Math.max(1, Math.ceil(turn.waitMs / 1000))} seconds`, turn.waitMs);
      const now = ctx.now();
      const refused = refusal(result, now);
      if (refused) throw conflict(refused);
      const moved = await s.taskDeliveries.expedite(taskResultId, now.toISOString());
      if (!moved.ok && moved.reason === "leased") throw conflict("An attempt of this task result is under way; wait for its answer");
      if (!moved.ok) throw conflict("The task result is not being retried: its request has not failed, or no attempt is left before its deadline");
      // Only a retry that started an attempt counts: a refused one (409) changed nothing.
      retries.take(taskResultId);
      for (const wake of [...dueListeners]) wake();
    },

    /** Calls `listener` whenever this process made an attempt due at once; returns the unsubscribe. */
    onDue(listener: () => void): () => void {
      dueListeners.add(listener);
      return () => void dueListeners.delete(listener);
    },

    /** decision D31: removes attempts older than the retention (option `attempts.retention`); resolves how many. */
    async prune(): Promise<number> {
      const before = new Date(ctx.now().getTime() - settings.attemptRetentionMs).toISOString();
      let removed = 0;
      for (let round = 0; round < MAX_PRUNE_ROUNDS; round++) {
        const n = await s.deliveryAttempts.prune(before, PRUNE_BATCH);
        removed += n;
        if (n < PRUNE_BATCH) break;
      }
      return removed;
    },
  };
}
export type DeliveryAttemptService = ReturnType<typeof createDeliveryAttemptService>;
