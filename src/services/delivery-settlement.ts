import { transitionResult } from "../domain/stage-machine.js";
import type { DeliveryAttemptRecord } from "../schemas/delivery-attempts.js";
import type { TaskDeliveryRecord } from "../schemas/run-task-records.js";
import type { ClaimedResult, DeliverySettlement, ResultAdvance, SettleOutcome } from "../storage/types.js";
import type { ServiceContext } from "./context.js";
import type { Excerpt } from "../domain/response-excerpt.js";
import { attemptRecord, excerptOf, type AttemptObservation } from "./delivery-attempts.js";
import type { DeliveryAttempt } from "./delivery-request.js";
import { createSettleQueue } from "./settle-queue.js";
import { burnCallbackToken } from "./token-burn.js";
import type { TaskStageService } from "./task-stages.js";

export interface DeliveryFailure {
  /** Why the attempt failed, stored as `lastError`: a status or an error code, never a URL or body. */
  error: string;
  /** When to try again, from now (the dispatcher's backoff, D15). */
  delayMs: number;
  /** decision D31: what the attempt saw, recorded with its settlement. */
  observed?: AttemptObservation;
}

/** An attempt as its settlement writes it, with its record (decision D31) when it was observed. */
type Recorded = { attempt: DeliveryAttempt; record?: DeliveryAttemptRecord };

/** What a claim reads of a result, from the result as a write left it. */
const pickClaimed = (r: ClaimedResult): ClaimedResult => ({ status: r.status, statusTimestamps: r.statusTimestamps, deadlineAt: r.deadlineAt, version: r.version, updatedAt: r.updatedAt });

/**
 * decision D40: how long a row sealed under a key this host lacks waits before any host may claim
 * it again (its attempt not spent): long enough that this host does not claim it back at once,
 * short next to a retry's backoff for the hosts that hold the key.
 */
export const KEY_WAIT_MS = 2_000;

const plus = (at: Date, ms: number): string => new Date(at.getTime() + ms).toISOString();

/** decision D15: the 200's `pending -> running`, computed by the stage machine from the claimed state. */
function advanceOnDelivery(attempt: DeliveryAttempt, now: Date): ResultAdvance | undefined {
  const t = transitionResult(attempt.result, { type: "deliver-ok" }, now);
  if (!t.ok || !t.changed) return undefined;
  const { result } = attempt;
  const expected = { statuses: [result.status], version: result.version };
  return { id: attempt.row.taskResultId, expected, status: t.status, statusTimestamps: t.statusTimestamps, version: result.version + 1, updatedAt: now.toISOString() };
}

/**
 * decision D58: the job of `attempt` was handed to an agent: its `under-way` record is stored at
 * once (guarded by the row's token, the lease kept). Resolves the record's id, which the attempt's
 * end completes in place, or null when the claim was replaced.
 */
const handOutVia = (ctx: Pick<ServiceContext, "newId">, push: (entry: DeliverySettlement) => Promise<SettleOutcome>) =>
  async (attempt: DeliveryAttempt, observed: AttemptObservation): Promise<string | null> => {
    const record = attemptRecord(ctx, attempt, observed, { text: null, truncated: false });
    const { id, fencingToken } = attempt.row;
    return (await push({ id, fencingToken, type: "hand-out", record })).written ? record.id : null;
  };

/**
 * decision D31: the record of an attempt that was observed (the dispatcher's attempts are; a
 * host's own calls may not be). decision D42: an answer that spelled the callback token burns it
 * first; `attempt` then comes back with its result as the burn left it (a 200 advances from there).
 * When the burn cannot be written the answer is not kept.
 */
function recordOf(ctx: ServiceContext, attempt: DeliveryAttempt, observed: AttemptObservation | undefined): Recorded | Promise<Recorded> {
  if (!observed) return { attempt };
  const excerpt = excerptOf(attempt, observed);
  // The token is read back from the request's bytes (a JSON parse of the whole payload) only
  // when the answer spelled a secret: most answers have no body at all.
  const token = attempt.ready && excerpt.found !== undefined && excerpt.found.length > 0 ? attempt.accessToken() : "";
  if (token === "" || !excerpt.found?.includes(token)) return { attempt, record: attemptRecord(ctx, attempt, observed, excerpt) };
  return burnThenRecord(ctx, attempt, observed, excerpt, token);
}

/** decision D42: the answer spelled the callback token: burned first, then recorded. */
async function burnThenRecord(ctx: ServiceContext, attempt: DeliveryAttempt, observed: AttemptObservation, excerpt: Excerpt, token: string): Promise<Recorded> {
  const burned = await burnCallbackToken(ctx, attempt.row.taskResultId, token);
  if (!burned) return { attempt, record: attemptRecord(ctx, attempt, observed, { text: null, truncated: false }) };
  return { attempt: { ...attempt, result: { ...attempt.result, ...pickClaimed(burned) } }, record: attemptRecord(ctx, attempt, observed, excerpt) };
}

/**
 * How an attempt's end is written (decisions D15, D31): settlements queue up and the ones that end
 * together are stored as one `settle` batch, each guarded by its row's fencing token.
 */
export function createDeliverySettlement(ctx: ServiceContext, stages: Pick<TaskStageService, "emitResult">, settleDelayMs: number) {
  const queue = createSettleQueue(ctx.storage.taskDeliveries, settleDelayMs);
  const lease = (row: TaskDeliveryRecord) => ({ id: row.id, fencingToken: row.fencingToken });
  const push = (entry: DeliverySettlement) => queue.push(entry);
  const close = async (row: TaskDeliveryRecord, lastError: string | null, deliveredAt: string | null = null, attempt = row.attempt, record?: DeliveryAttemptRecord) =>
    (await push({ ...lease(row), type: "close", fields: { attempt, closedAt: ctx.now().toISOString(), deliveredAt, lastError }, ...(record ? { record } : {}) })).written;
  /**
   * The integration answered exactly 200 (spec 4.1): one write closes the row as delivered and
   * moves the result `pending -> running` (`deliver-ok`) unless a callback moved it since the
   * claim. Resolves whether the row was still held.
   */
  async function succeed(claimed: DeliveryAttempt, observed?: AttemptObservation): Promise<boolean> {
    // Awaited only when a burn had to be written first: every delivery passes here.
    const recorded = recordOf(ctx, claimed, observed);
    const { attempt, record } = recorded instanceof Promise ? await recorded : recorded;
    const now = ctx.now();
    const at = now.toISOString();
    const result = advanceOnDelivery(attempt, now);
    const entry: DeliverySettlement & { type: "close" } = { ...lease(attempt.row), type: "close", fields: { attempt: attempt.row.attempt + 1, closedAt: at, deliveredAt: at, lastError: null } };
    if (result) entry.result = result;
    if (record) entry.record = record;
    const outcome = await push(entry);
    const { row } = attempt;
    const before = { id: row.taskResultId, stageId: row.stageId, runId: row.runId, stage: row.stage, status: attempt.result.status, updatedAt: attempt.result.updatedAt };
    // When the advance did not land, the result left `pending` after the claim (only a callback,
    // a cancel or the deadline move a pending result, and each leaves it running or final), so
    // `deliver-ok` has nothing left to do: no re-read.
    if (outcome.result && result) stages.emitResult(before, { ...before, status: result.status, updatedAt: result.updatedAt });
    return outcome.written;
  }

  /**
   * Any other answer or a transport error (D15): the row waits `delayMs` for its next attempt,
   * or closes when that would not start before the deadline (the sweeper then settles the
   * result). Resolves `"retry"`, `"closed"`, or `"lost"` when the claim was replaced.
   */
  async function fail(attempt: DeliveryAttempt, failure: DeliveryFailure): Promise<"retry" | "closed" | "lost"> {
    const { row } = attempt;
    const { record } = await recordOf(ctx, attempt, failure.observed);
    const dueAt = plus(ctx.now(), Math.max(0, failure.delayMs));
    if (Date.parse(dueAt) >= Date.parse(attempt.deadlineAt)) {
      return (await close(row, failure.error, null, row.attempt + 1, record)) ? "closed" : "lost";
    }
    const fields = { attempt: row.attempt + 1, dueAt, lastError: failure.error };
    const outcome = await push({ ...lease(row), type: "retry", fields, ...(record ? { record } : {}) });
    return outcome.written ? "retry" : "lost";
  }

  return {
    close,
    succeed,
    fail,
    handOut: handOutVia(ctx, push),
    /**
     * decision D40: this host lacks the key the row's payload (or its task's HMAC key) was sealed
     * with: the row goes back due in KEY_WAIT_MS for the hosts that hold it, its attempt count as it
     * was, its last error saying what it waits for. Resolves whether the claim was still held.
     */
    leave: async (row: TaskDeliveryRecord, keyId: string): Promise<boolean> => {
      const fields = { attempt: row.attempt, dueAt: plus(ctx.now(), KEY_WAIT_MS), lastError: `waiting for a host holding key ${keyId}` };
      return (await push({ ...lease(row), type: "retry", fields })).written;
    },
    /** Gives a claimed row back unused (a stopping dispatcher, a lease too short to start on). */
    release: async (row: TaskDeliveryRecord): Promise<boolean> => (await push({ ...lease(row), type: "release" })).written,
    /** Resolves once every settlement asked for so far is stored. */
    flush: (): Promise<void> => queue.drain(),
  };
}
