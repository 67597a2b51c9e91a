import { rowBinding } from "../crypto/keyring.js";
import { buildRunTaskRequest, runTaskRequestHeaders, serializeRunTaskRequest } from "../domain/run-task-request.js";
import { TIMED_OUT_MESSAGE, transitionResult, type ResultEvent } from "../domain/stage-machine.js";
import type { RunRecord, TaskDeliveryRecord, TaskResultRecord } from "../schemas/run-task-records.js";
import type { ServiceContext } from "./context.js";
import { hmacKeyBinding } from "./run-task-config.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import type { TaskStageService } from "./task-stages.js";

/** decision D11: the outbox payload holds the access token, so it is sealed for its row. */
export const deliveryPayloadBinding = (deliveryId: string): string => rowBinding("task_deliveries", "payload", deliveryId);

/**
 * The outbox row of one result of a starting stage (decision D15): the request payload (spec 4.1,
 * D14) built and serialized once, with the result's fresh access token inside, sealed for the row.
 * Due at once, no attempt yet, no lease; the dispatcher claims it.
 */
export function buildDelivery(
  ctx: ServiceContext,
  settings: RunTaskSettings,
  run: RunRecord,
  result: TaskResultRecord,
  token: string,
  workspace: { id: string; name: string; workingDirectory: string },
  now: Date,
): TaskDeliveryRecord {
  const id = ctx.newId("dlv");
  const payload = buildRunTaskRequest({
    stage: result.stage,
    accessToken: token,
    urls: { publicUrl: settings.publicUrl, appUrl: settings.appUrl, basePath: settings.basePath },
    organizationName: run.organization,
    run: {
      id: run.id,
      createdAt: run.createdAt,
      createdBy: run.createdBy,
      message: run.message,
      isSpeculative: run.isSpeculative,
      planId: run.planId,
    },
    configurationVersion: { id: run.configurationVersionId, downloadable: run.configurationVersionDownloadable },
    workspace,
    vcs: run.vcs,
    taskResult: { id: result.id, enforcementLevel: result.enforcementLevel },
  });
  // decision D14: serialized once; the dispatcher signs and sends exactly these bytes.
  const text = new TextDecoder().decode(serializeRunTaskRequest(payload));
  return {
    id,
    taskResultId: result.id,
    stageId: result.stageId,
    runId: run.id,
    taskId: result.taskId,
    stage: result.stage,
    url: result.taskUrl,
    attempt: 0,
    dueAt: now.toISOString(),
    leaseOwner: null,
    leaseExpiresAt: null,
    fencingToken: 0,
    payload: ctx.keyring.seal(text, deliveryPayloadBinding(id)),
    createdAt: now.toISOString(),
    deliveredAt: null,
    closedAt: null,
    lastError: null,
  };
}

/** Compare-and-set retries before giving up under extreme contention. */
const MAX_ATTEMPTS = 16;

/**
 * One claimed row prepared for its attempt. Ready: the sealed payload opened and signed (D14).
 * Not ready (the payload or the task's key cannot be opened by this process's keyring, or the task
 * was deleted): the attempt fails without sending and is retried like any other failure, so a
 * process with an outdated keyring never settles a result another process could deliver.
 */
export type DeliveryAttempt = {
  /** The row as claimed: its `fencingToken` authorizes this attempt's writes. */
  row: TaskDeliveryRecord;
  /** decision D16: no attempt may start at or after this instant. */
  deadlineAt: string;
} & (
  | { ready: true; request: { url: string; headers: Record<string, string>; body: Uint8Array } }
  | { ready: false; error: string }
);

export interface DeliveryFailure {
  /** Why the attempt failed, stored as `lastError`: a status or an error code, never a URL or body. */
  error: string;
  /** When to try again, from now (the dispatcher's backoff, D15). */
  delayMs: number;
}

const plus = (at: Date, ms: number): string => new Date(at.getTime() + ms).toISOString();

/**
 * The outbox steps a dispatcher strings together (decisions D14-D16): claim, prepare, record the
 * answer, sweep. Each state change is one compare-and-set; a step whose claim was replaced by a
 * newer one writes nothing. `src/delivery/dispatcher.ts` drives them; hosts may too.
 */
export function createTaskDeliveryService(ctx: ServiceContext, settings: RunTaskSettings, stages: TaskStageService) {
  const s = ctx.storage;

  /** decision D16: the window opens at the first attempt, not when the stage starts. */
  const windowFrom = (now: Date): Pick<TaskResultRecord, "deadlineAt" | "deadlineMaxAt"> => {
    const rule = settings.deadline;
    return rule.kind === "fixed"
      ? { deadlineAt: plus(now, rule.ms), deadlineMaxAt: null }
      : { deadlineAt: plus(now, rule.idleMs), deadlineMaxAt: plus(now, rule.maxMs) };
  };

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

  const close = (row: TaskDeliveryRecord, lastError: string | null, deliveredAt: string | null = null, attempt = row.attempt) =>
    s.taskDeliveries.complete(row.id, row.fencingToken, { attempt, closedAt: ctx.now().toISOString(), deliveredAt, lastError });

  /**
   * Opens the window at the first attempt (D16) with a compare-and-set. Resolves the result to send
   * for, or null when the row needs no attempt (and closes it): the result is final or already
   * running (a callback proved the integration has the request), or its deadline has passed.
   */
  async function openWindow(row: TaskDeliveryRecord): Promise<TaskResultRecord | null> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const result = await s.taskResults.get(row.taskResultId);
      const now = ctx.now();
      if (!result) return close(row, row.lastError).then(() => null);
      if (result.status !== "pending") return close(row, row.lastError).then(() => null);
      if (result.deadlineAt !== null) return now.getTime() < Date.parse(result.deadlineAt) ? result : close(row, row.lastError).then(() => null);
      const next: TaskResultRecord = { ...result, ...windowFrom(now), version: result.version + 1, updatedAt: now.toISOString() };
      const stored = await s.taskResults.transition(result.id, { statuses: ["pending"], version: result.version }, next);
      if (stored) return stored;
    }
    return null;
  }

  return {
    /** The instance's clock and logger, so a dispatcher reads the same time and logs to the same place. */
    now: (): Date => ctx.now(),
    logger: ctx.logger,
    /** Leases due rows for `owner` (D15); see `TaskDeliveryStore.claim`. */
    claim: (request: { owner: string; leaseMs: number; limit: number }): Promise<TaskDeliveryRecord[]> =>
      s.taskDeliveries.claim({ ...request, now: ctx.now().toISOString() }),

    /**
     * Turns a claimed row into a request, or resolves null when it needs none (the row is then
     * closed). Signs with the task's current HMAC key (D14): a key rotated while a delivery waits
     * for its retry applies to the next attempt, so the integration can always verify with the key
     * it holds now. The URL stays the one snapshotted when the run was created.
     */
    async prepare(row: TaskDeliveryRecord): Promise<DeliveryAttempt | null> {
      const result = await openWindow(row);
      if (!result || result.deadlineAt === null) return null;
      const base = { row, deadlineAt: result.deadlineAt };
      const notReady = (error: string): DeliveryAttempt => {
        ctx.logger.error("run task request cannot be built", { deliveryId: row.id, taskResultId: row.taskResultId, reason: error });
        return { ...base, ready: false, error };
      };
      let body: Uint8Array;
      let key: string | null;
      try {
        body = new TextEncoder().encode(ctx.keyring.open(row.payload, deliveryPayloadBinding(row.id)));
      } catch {
        return notReady("the request payload could not be opened");
      }
      const task = await s.runTasks.get(row.taskId);
      if (!task) return notReady("the run task was deleted");
      try {
        key = task.hmacKey === null ? null : ctx.keyring.open(task.hmacKey, hmacKeyBinding(task.id));
      } catch {
        return notReady("the run task's HMAC key could not be opened");
      }
      const headers = runTaskRequestHeaders({ bytes: body, key, dialect: ctx.dialect, userAgent: settings.userAgent });
      return { ...base, ready: true, request: { url: row.url, headers, body } };
    },

    /**
     * The integration answered exactly 200 (spec 4.1): the result goes `pending -> running`
     * (`deliver-ok`) unless a callback already moved it, then the row closes as delivered. In this
     * order, a stop between the two leaves a running result whose open row is closed unsent later.
     */
    async succeed(attempt: DeliveryAttempt): Promise<boolean> {
      await moveResult(attempt.row.taskResultId, { type: "deliver-ok" });
      return close(attempt.row, null, ctx.now().toISOString(), attempt.row.attempt + 1);
    },

    /**
     * Any other answer or a transport error (D15): the row waits `delayMs` for its next attempt,
     * or closes when that would not start before the deadline (the sweeper then settles the
     * result). Resolves `"retry"`, `"closed"`, or `"lost"` when the claim was replaced.
     */
    async fail(attempt: DeliveryAttempt, failure: DeliveryFailure): Promise<"retry" | "closed" | "lost"> {
      const { row } = attempt;
      const now = ctx.now();
      const dueAt = plus(now, Math.max(0, failure.delayMs));
      if (Date.parse(dueAt) >= Date.parse(attempt.deadlineAt)) {
        return (await close(row, failure.error, null, row.attempt + 1)) ? "closed" : "lost";
      }
      const ok = await s.taskDeliveries.reschedule(row.id, row.fencingToken, { attempt: row.attempt + 1, dueAt, lastError: failure.error });
      return ok ? "retry" : "lost";
    },

    /** Gives a claimed row back unused (a stopping dispatcher). */
    release: (row: TaskDeliveryRecord): Promise<boolean> => s.taskDeliveries.release(row.id, row.fencingToken),

    /** Open results past their deadline (D16), oldest first. */
    listExpired: (limit: number): Promise<TaskResultRecord[]> => s.taskResults.listPastDeadline(ctx.now().toISOString(), limit),

    /**
     * decision D16: a result past its deadline becomes `errored` (`Task result timed out.`) when it
     * was delivered or called back, `unreachable` when it never got a 200. Resolves the stored row,
     * or null when it no longer applies (a callback won or moved the deadline).
     */
    async expire(result: TaskResultRecord): Promise<TaskResultRecord | null> {
      const rows = await s.taskDeliveries.listByResult(result.id);
      const lastError = rows.map((r) => r.lastError).filter((e) => e !== null).at(-1);
      const message = (r: TaskResultRecord) =>
        r.status === "running" ? TIMED_OUT_MESSAGE : `Task request was not delivered before the deadline${lastError ? `: ${lastError}` : ""}.`;
      const due = (r: TaskResultRecord, now: Date) => r.deadlineAt !== null && now.getTime() >= Date.parse(r.deadlineAt);
      return moveResult(result.id, { type: "deadline" }, message, due);
    },

    /** Running stages whose results are all final: a stop between a result and its stage left them. */
    listUnsettledStages: (limit: number) => s.taskStages.listUnsettled(limit),
    /** Recomputes a stage from its results (D13) and fires its event after the store. */
    settle: (stageId: string) => stages.recompute(stageId),
  };
}
export type TaskDeliveryService = ReturnType<typeof createTaskDeliveryService>;
