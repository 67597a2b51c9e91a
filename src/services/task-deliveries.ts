import type { ClaimedDelivery, StopListening, Storage } from "../storage/types.js";
import type { TaskDeliveryRecord, TaskResultRecord } from "../schemas/run-task-records.js";
import type { OutboxFigures } from "../telemetry/metrics.js";
import { GLOBAL_TELEMETRY } from "../telemetry/providers.js";
import { createAttemptWindow } from "./attempt-window.js";
import type { ServiceContext } from "./context.js";
import { createDeliveryAttemptService } from "./delivery-attempts.js";
import { createAgentService } from "./agents.js";
import { createRequestBuilder, type DeliveryAttempt } from "./delivery-request.js";
import { createDeliverySettlement } from "./delivery-settlement.js";
import { createKeyWaits } from "./key-waits.js";
import type { FreshPayloads } from "./fresh-payloads.js";
import { createResultExpiry } from "./result-expiry.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import type { TaskStageService } from "./task-stages.js";

export { deliveryBuilder, deliveryPayloadBinding } from "./delivery-builder.js";
export type { DeliveryAttempt } from "./delivery-request.js";
export type { DeliveryFailure } from "./delivery-settlement.js";

export interface DeliveryServiceOptions {
  /**
   * How long settlements wait to share one write, in ms. 0 (the default): the next turn of the
   * event loop, and whatever arrives while a write is under way joins the one after it.
   */
  settleDelayMs?: number;
  /** Texts of rows this process just stored (`createFreshPayloads`), used for their first attempt instead of opening the stored value. */
  fresh?: FreshPayloads;
}

/**
 * The outbox's figures at `now`, or null when the storage offers no `stats`: for metrics and
 * health checks, one read over the open rows.
 */
async function outboxFigures(s: Storage, now: Date): Promise<OutboxFigures | null> {
  if (!s.taskDeliveries.stats) return null;
  const { due, leased, oldestDueAt, retrying, oldestRetryingAt } = await s.taskDeliveries.stats(now.toISOString());
  const age = (at: string | null): number => (at === null ? 0 : Math.max(0, (now.getTime() - Date.parse(at)) / 1000));
  // An adapter written before the attempt history (D31) does not count retrying rows.
  const counted = typeof retrying === "number";
  return { due, leased, oldestDueAgeSeconds: age(oldestDueAt), retrying: counted ? retrying : null, oldestRetryingAgeSeconds: counted ? age(oldestRetryingAt ?? null) : null };
}

/** decision D53: at most this many audit events go per sweep, in batches of this size (one transaction each). */
const AUDIT_PRUNE_BATCH = 1_000;
const AUDIT_PRUNE_ROUNDS = 10;

/** Removes audit events past `audit.retention`, a bounded number per call; resolves how many. */
function auditPruner(ctx: ServiceContext, settings: Pick<RunTaskSettings, "auditRetentionMs">) {
  return async (): Promise<number> => {
    const audit = ctx.storage.audit;
    if (!audit) return 0;
    const before = ctx.now().getTime() - settings.auditRetentionMs;
    let removed = 0;
    for (let round = 0; round < AUDIT_PRUNE_ROUNDS; round++) {
      const n = await audit.prune(before, AUDIT_PRUNE_BATCH);
      removed += n;
      if (n < AUDIT_PRUNE_BATCH) break;
    }
    return removed;
  };
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
  const build = createRequestBuilder(ctx, settings, options.fresh);
  const settlement = createDeliverySettlement(ctx, stages, options.settleDelayMs ?? 0);
  const keyWaits = createKeyWaits(s, ctx.logger, ctx.now);
  const expiry = createResultExpiry(ctx, stages);

  /** decision D16: the window a first attempt opens (the claim writes it). */
  const window = settings.deadline.kind === "fixed"
    ? { ms: settings.deadline.ms, maxMs: null }
    : { ms: settings.deadline.idleMs, maxMs: settings.deadline.maxMs };

  return {
    ...instanceParts(ctx, settings, options),
    /**
     * Leases up to `limit` due rows for `owner` and opens their results' windows (D15, D16); see
     * `TaskDeliveryStore.claim`. decision D34: rows without a pool unless `pools` names some.
     */
    async claim(request: { owner: string; leaseMs: number; limit: number; pools?: readonly string[] | null }): Promise<ClaimedDelivery[]> {
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
        await settlement.close(row, row.lastError);
        return null;
      }
      return build(claimed, result, deadlineAt);
    },

    succeed: settlement.succeed,
    fail: settlement.fail,
    handOut: settlement.handOut,
    /**
     * decision D27: wake-ups from every process sharing the storage (`Storage.listen`), when it
     * offers them. Resolves a function that stops them, or null without.
     */
    listen: (onWake: () => void): Promise<StopListening | null> => (s.listen ? s.listen(onWake) : Promise.resolve(null)),
    release: settlement.release,
    /** decision D40: leaves the row for hosts holding `keyId`, noting the wait (warned, and read by health). */
    leave: (row: TaskDeliveryRecord, keyId: string): Promise<boolean> => (keyWaits.left(keyId), settlement.leave(row, keyId)),
    keyWaits,
    flush: settlement.flush,

    /** Open results past their deadline (D16), oldest first. */
    listExpired: (limit: number): Promise<TaskResultRecord[]> => s.taskResults.listPastDeadline(ctx.now().toISOString(), limit),
    expire: expiry.expire,
    /** Ends a pending result `unreachable` now (its request can never be sent); resolves the stored row or null. */
    giveUp: expiry.giveUp,
    /** Running stages whose results are all final: a stop between a result and its stage left them. */
    listUnsettledStages: (limit: number) => s.taskStages.listUnsettled(limit),
    /** Recomputes a stage from its results (D13) and fires its event after the store. */
    settle: (stageId: string) => stages.recompute(stageId),
  };
}
export type TaskDeliveryService = ReturnType<typeof createTaskDeliveryService>;

/** What a dispatcher reads of the instance besides the rows: its texts, clock, logger, telemetry, history and sweeps. */
function instanceParts(ctx: ServiceContext, settings: RunTaskSettings, options: DeliveryServiceOptions) {
  return {
    /**
     * While held (a dispatcher's life), the request texts this instance enqueues are kept for its
     * own first attempts, which then need not open the sealed payload; resolves the release.
     * Without `fresh`, nothing is kept.
     */
    holdTexts: (): (() => void) => options.fresh?.hold() ?? (() => undefined),
    /** The instance's clock and logger, so a dispatcher reads the same time and logs to the same place. */
    now: (): Date => ctx.now(),
    logger: ctx.logger,
    /** decision D50: where the dispatcher's metrics and spans go, as this instance's. */
    telemetry: ctx.telemetry ?? GLOBAL_TELEMETRY,
    /** decision D31: the attempt history (`list`, `prune`) and retry now (`retryNow`, `onDue`). */
    attempts: createDeliveryAttemptService(ctx, settings),
    /** decision D46: removes agents silent for longer than `agentRecords.retention`; resolves how many. */
    pruneAgents: createAgentService(ctx).prune,
    /** decision D53: removes audit events past `audit.retention`, a bounded number per sweep; resolves how many. */
    pruneAudit: auditPruner(ctx, settings),
    /** The outbox's figures now, or null when the storage offers no `stats`: for metrics and health checks. */
    outbox: (): Promise<OutboxFigures | null> => outboxFigures(ctx.storage, ctx.now()),
    /** decision D31: how this process's attempts of the last `health.window` ended (the dispatcher records them), for `health()`. */
    recent: createAttemptWindow(settings.health.windowMs),
  };
}
