import { runTaskRequestHeaders, SIGNATURE_HEADERS } from "../domain/run-task-request.js";
import { runTaskRequestTemplate } from "../domain/request-template.js";
import type { RunStage } from "../schemas/run-tasks.js";
import type { FreshPayloads } from "./fresh-payloads.js";
import type { DeliveryAttemptRecord } from "../schemas/delivery-attempts.js";
import { attemptRecord, createDeliveryAttemptService, type AttemptObservation } from "./delivery-attempts.js";
import { TIMED_OUT_MESSAGE, transitionResult, type ResultEvent } from "../domain/stage-machine.js";
import type { RunRecord, TaskDeliveryRecord, TaskResultRecord } from "../schemas/run-task-records.js";
import type { ClaimedDelivery, ClaimedResult, DeliverySettlement, ResultAdvance, StopListening } from "../storage/types.js";
import type { ServiceContext } from "./context.js";
import { sealedBinding } from "./sealing.js";
import { hmacKeyBinding } from "./run-task-config.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import type { TaskStageService } from "./task-stages.js";
import { createSettleQueue } from "./settle-queue.js";
import type { OutboxFigures } from "../telemetry/metrics.js";
import { createAttemptWindow } from "./attempt-window.js";

/** decision D11: the outbox payload holds the access token, so it is sealed for its row. */
export const deliveryPayloadBinding = (deliveryId: string): string => sealedBinding("task_deliveries.payload", deliveryId);

/**
 * The outbox rows of the results of one starting stage (decision D15): each result's request
 * payload (spec 4.1, D14) serialized once, with its fresh access token inside, sealed for its row;
 * due at once, no attempt yet, no lease; the dispatcher claims them. The stage's request is
 * serialized once and each result's fields spliced in (`runTaskRequestTemplate`, issue 28).
 * Returns each row with its text, for this process's own first attempt (`createFreshPayloads`).
 */
export function deliveryBuilder(
  ctx: ServiceContext,
  settings: RunTaskSettings,
  run: RunRecord,
  stage: RunStage,
  workspace: { id: string; name: string; workingDirectory: string },
  now: Date,
): (result: TaskResultRecord, token: string) => { row: TaskDeliveryRecord; text: string } {
  const template = runTaskRequestTemplate({
    stage,
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
    // decision D24: no configuration provider, nothing to download.
    configurationVersion: {
      id: run.configurationVersionId,
      downloadable: run.configurationVersionDownloadable && settings.configurationDownloads,
    },
    workspace,
    vcs: run.vcs,
  });
  const at = now.toISOString();
  return (result, token) => {
    const id = ctx.newId("dlv");
    // decision D14: serialized once; the dispatcher signs and sends exactly these bytes.
    const text = template({ accessToken: token, taskResult: { id: result.id, enforcementLevel: result.enforcementLevel } });
    const row: TaskDeliveryRecord = {
      id,
      taskResultId: result.id,
      stageId: result.stageId,
      runId: run.id,
      taskId: result.taskId,
      stage: result.stage,
      url: result.taskUrl,
      attempt: 0,
      dueAt: at,
      leaseOwner: null,
      leaseExpiresAt: null,
      fencingToken: 0,
      payload: ctx.keyring.seal(text, deliveryPayloadBinding(id)),
      createdAt: at,
      deliveredAt: null,
      closedAt: null,
      lastError: null,
    };
    return { row, text };
  };
}

/** Compare-and-set retries before giving up under extreme contention. */
const MAX_ATTEMPTS = 16;
/** Opened HMAC keys kept per sealed string (a rotated key is a new string): bounded, then cleared. */
const KEY_CACHE_SIZE = 1024;

/**
 * One claimed row prepared for its attempt. Ready: the sealed payload opened and signed (D14).
 * Not ready (the payload or the task's key cannot be opened by this process's keyring, or the task
 * was deleted): the attempt fails without sending and is retried like any other failure, so a
 * process with an outdated keyring never settles a result another process could deliver.
 */
export type DeliveryAttempt = {
  /** The row as claimed: its `fencingToken` authorizes this attempt's writes. */
  row: TaskDeliveryRecord;
  /** The row's result as the claim left it (window open): a 200 advances it from this state. */
  result: ClaimedResult;
  /** decision D16: no attempt may start at or after this instant. */
  deadlineAt: string;
} & (
  | {
      ready: true;
      request: { url: string; headers: Record<string, string>; body: Uint8Array };
      /** decision D31: what an answer's excerpt must not show: the access token, the HMAC key, the signature. */
      secrets: () => string[];
    }
  | { ready: false; error: string }
);

export interface DeliveryFailure {
  /** Why the attempt failed, stored as `lastError`: a status or an error code, never a URL or body. */
  error: string;
  /** When to try again, from now (the dispatcher's backoff, D15). */
  delayMs: number;
  /** decision D31: what the attempt saw, recorded with its settlement. */
  observed?: AttemptObservation;
}

export interface DeliveryServiceOptions {
  /**
   * How long settlements wait to share one write, in ms. 0 (the default): the next turn of the
   * event loop, and whatever arrives while a write is under way joins the one after it.
   */
  settleDelayMs?: number;
  /** Texts of rows this process just stored (`createFreshPayloads`), used for their first attempt instead of opening the stored value. */
  fresh?: FreshPayloads;
}

const encoder = new TextEncoder();
const plus = (at: Date, ms: number): string => new Date(at.getTime() + ms).toISOString();

/** The request's callback access token (D17), read back from the bytes sent; "" when absent. */
function accessTokenOf(body: Uint8Array): string {
  try {
    const token = (JSON.parse(new TextDecoder().decode(body)) as { access_token?: unknown }).access_token;
    return typeof token === "string" ? token : "";
  } catch {
    return "";
  }
}

/**
 * The outbox steps a dispatcher strings together (decisions D14-D16): claim, prepare, record the
 * answer, sweep. A claim leases a batch of rows and opens their results' deadline windows in one
 * step; the answers of attempts that end together are written as one `settle` batch, each row
 * guarded by its fencing token, a 200 moving its result to `running` in the same write. A step
 * whose claim was replaced by a newer one writes nothing. `src/delivery/dispatcher.ts` drives
 * them; hosts may too.
 */
export function createTaskDeliveryService(
  ctx: ServiceContext,
  settings: RunTaskSettings,
  stages: TaskStageService,
  options: DeliveryServiceOptions = {},
) {
  const s = ctx.storage;
  const queue = createSettleQueue(s.taskDeliveries, options.settleDelayMs ?? 0);
  const keys = new Map<string, string>();

  /** decision D16: the window a first attempt opens (the claim writes it). */
  const window = settings.deadline.kind === "fixed"
    ? { ms: settings.deadline.ms, maxMs: null }
    : { ms: settings.deadline.idleMs, maxMs: settings.deadline.maxMs };

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

  const lease = (row: TaskDeliveryRecord) => ({ id: row.id, fencingToken: row.fencingToken });
  const push = (entry: DeliverySettlement) => queue.push(entry);
  const close = async (row: TaskDeliveryRecord, lastError: string | null, deliveredAt: string | null = null, attempt = row.attempt, record?: DeliveryAttemptRecord) =>
    (await push({ ...lease(row), type: "close", fields: { attempt, closedAt: ctx.now().toISOString(), deliveredAt, lastError }, ...(record ? { record } : {}) })).written;
  /** decision D31: the record of an attempt that was observed (the dispatcher's attempts are; a host's own calls may not be). */
  const recordOf = (attempt: DeliveryAttempt, observed: AttemptObservation | undefined) => (observed ? attemptRecord(ctx, attempt, observed) : undefined);

  /** The task's HMAC key in the clear (D11, D14), opened once per sealed string. */
  function openKey(taskId: string, sealed: string): string {
    const known = keys.get(sealed);
    if (known !== undefined) return known;
    const key = ctx.keyring.open(sealed, hmacKeyBinding(taskId));
    if (keys.size >= KEY_CACHE_SIZE) keys.clear();
    keys.set(sealed, key);
    return key;
  }

  /** decision D15: the 200's `pending -> running`, computed by the stage machine from the claimed state. */
  function advanceOnDelivery(attempt: DeliveryAttempt, now: Date): ResultAdvance | undefined {
    const t = transitionResult(attempt.result, { type: "deliver-ok" }, now);
    if (!t.ok || !t.changed) return undefined;
    const { result } = attempt;
    const expected = { statuses: [result.status], version: result.version };
    return { id: attempt.row.taskResultId, expected, status: t.status, statusTimestamps: t.statusTimestamps, version: result.version + 1, updatedAt: now.toISOString() };
  }

  /** Builds the signed request (D14) from what the claim read; throws nothing. */
  function build(claimed: ClaimedDelivery, result: ClaimedResult, deadlineAt: string): DeliveryAttempt {
    const { row, task } = claimed;
    const base = { row, result, deadlineAt };
    const notReady = (error: string): DeliveryAttempt => {
      ctx.logger.error("run task request cannot be built", { deliveryId: row.id, taskResultId: row.taskResultId, reason: error });
      return { ...base, ready: false, error };
    };
    let body: Uint8Array;
    let key: string | null;
    try {
      body = encoder.encode(options.fresh?.take(row.id) ?? ctx.keyring.open(row.payload, deliveryPayloadBinding(row.id)));
    } catch {
      return notReady("the request payload could not be opened");
    }
    if (!task) return notReady("the run task was deleted");
    try {
      key = task.hmacKey === null ? null : openKey(row.taskId, task.hmacKey);
    } catch {
      return notReady("the run task's HMAC key could not be opened");
    }
    const headers = runTaskRequestHeaders({ bytes: body, key, dialect: ctx.dialect, userAgent: settings.userAgent });
    // Read only when an answer has a body to excerpt: most answers have none.
    const secrets = () => [accessTokenOf(body), key ?? "", headers[SIGNATURE_HEADERS[ctx.dialect]] ?? ""];
    return { ...base, ready: true, request: { url: row.url, headers, body }, secrets };
  }

  return {
    /**
     * Issue 28: while held (a dispatcher's life), the request texts this instance enqueues are kept
     * for its own first attempts; resolves the release. Without `fresh`, nothing is kept.
     */
    holdTexts: (): (() => void) => options.fresh?.hold() ?? (() => undefined),
    /** The instance's clock and logger, so a dispatcher reads the same time and logs to the same place. */
    now: (): Date => ctx.now(),
    logger: ctx.logger,
    /** decision D31: the attempt history (`list`, `prune`) and retry now (`retryNow`, `onDue`). */
    attempts: createDeliveryAttemptService(ctx, settings),
    /**
     * The outbox's figures now (issue 17), or null when the storage offers no `stats`: for metrics
     * and health checks, one read over the open rows.
     */
    async outbox(): Promise<OutboxFigures | null> {
      if (!s.taskDeliveries.stats) return null;
      const now = ctx.now();
      const { due, leased, oldestDueAt, retrying, oldestRetryingAt } = await s.taskDeliveries.stats(now.toISOString());
      const age = (at: string | null): number => (at === null ? 0 : Math.max(0, (now.getTime() - Date.parse(at)) / 1000));
      // An adapter written before issue 26 does not count retrying rows.
      const counted = typeof retrying === "number";
      return { due, leased, oldestDueAgeSeconds: age(oldestDueAt), retrying: counted ? retrying : null, oldestRetryingAgeSeconds: counted ? age(oldestRetryingAt ?? null) : null };
    },
    /** Issue 26: how this process's attempts of the last `health.window` ended (the dispatcher records them), for `health()`. */
    recent: createAttemptWindow(settings.health.windowMs),
    /** Leases up to `limit` due rows for `owner` and opens their results' windows (D15, D16); see `TaskDeliveryStore.claim`. */
    async claim(request: { owner: string; leaseMs: number; limit: number }): Promise<ClaimedDelivery[]> {
      const claimed = await s.taskDeliveries.claim({ ...request, now: ctx.now().toISOString(), window });
      // decision D29: a row sealed under a key this host does not hold yet reloads the keyring once.
      await ctx.keys.holdKeysOf(claimed.flatMap((c) => [c.row.payload, c.task?.hmacKey]));
      return claimed;
    },

    /**
     * Turns a claimed row into a request, or resolves null when it needs none (the row is then
     * closed): its result is gone, final, or already running (a callback proved the integration has
     * the request), or its deadline has passed. Reads nothing from storage: the claim brought the
     * result and the task. Signs with the task's current HMAC key (D14): a key rotated while a
     * delivery waits for its retry applies to the next attempt. The URL stays the one snapshotted
     * when the run was created.
     */
    async prepare(claimed: ClaimedDelivery): Promise<DeliveryAttempt | null> {
      const { row, result } = claimed;
      const deadlineAt = result?.deadlineAt ?? null;
      if (!result || result.status !== "pending" || deadlineAt === null || ctx.now().getTime() >= Date.parse(deadlineAt)) {
        await close(row, row.lastError);
        return null;
      }
      return build(claimed, result, deadlineAt);
    },

    /**
     * The integration answered exactly 200 (spec 4.1): one write closes the row as delivered and
     * moves the result `pending -> running` (`deliver-ok`) unless a callback moved it since the
     * claim. Resolves whether the row was still held.
     */
    async succeed(attempt: DeliveryAttempt, observed?: AttemptObservation): Promise<boolean> {
      const now = ctx.now();
      const at = now.toISOString();
      const result = advanceOnDelivery(attempt, now);
      const record = recordOf(attempt, observed);
      const fields = { attempt: attempt.row.attempt + 1, closedAt: at, deliveredAt: at, lastError: null };
      const outcome = await push({ ...lease(attempt.row), type: "close", fields, ...(result ? { result } : {}), ...(record ? { record } : {}) });
      const { row } = attempt;
      const before = { id: row.taskResultId, stageId: row.stageId, runId: row.runId, stage: row.stage, status: attempt.result.status, updatedAt: attempt.result.updatedAt };
      // When the advance did not land, the result left `pending` after the claim (only a callback,
      // a cancel or the deadline move a pending result, and each leaves it running or final), so
      // `deliver-ok` has nothing left to do: no re-read.
      if (outcome.result && result) stages.emitResult(before, { ...before, status: result.status, updatedAt: result.updatedAt });
      return outcome.written;
    },

    /**
     * Any other answer or a transport error (D15): the row waits `delayMs` for its next attempt,
     * or closes when that would not start before the deadline (the sweeper then settles the
     * result). Resolves `"retry"`, `"closed"`, or `"lost"` when the claim was replaced.
     */
    async fail(attempt: DeliveryAttempt, failure: DeliveryFailure): Promise<"retry" | "closed" | "lost"> {
      const { row } = attempt;
      const dueAt = plus(ctx.now(), Math.max(0, failure.delayMs));
      const record = recordOf(attempt, failure.observed);
      if (Date.parse(dueAt) >= Date.parse(attempt.deadlineAt)) {
        return (await close(row, failure.error, null, row.attempt + 1, record)) ? "closed" : "lost";
      }
      const fields = { attempt: row.attempt + 1, dueAt, lastError: failure.error };
      const outcome = await push({ ...lease(row), type: "retry", fields, ...(record ? { record } : {}) });
      return outcome.written ? "retry" : "lost";
    },

    /**
     * decision D27: wake-ups from every process sharing the storage (`Storage.listen`), when it
     * offers them. Resolves a function that stops them, or null without.
     */
    listen: (onWake: () => void): Promise<StopListening | null> => (s.listen ? s.listen(onWake) : Promise.resolve(null)),
    /** Gives a claimed row back unused (a stopping dispatcher, a lease too short to start on). */
    release: async (row: TaskDeliveryRecord): Promise<boolean> => (await push({ ...lease(row), type: "release" })).written,
    /** Resolves once every settlement asked for so far is stored. */
    flush: (): Promise<void> => queue.drain(),

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
