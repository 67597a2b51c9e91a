import { isFinalResultStatus, transitionResult } from "../domain/stage-machine.js";
import { ApiError, conflict } from "../errors.js";
import type { TaskResultRecord } from "../schemas/run-task-records.js";
import { CallbackSchema } from "../schemas/run-tasks.js";
import { isStorageUnavailableError } from "../storage/unavailable.js";
import { checkResultLimits, expired, isStoredRepeat, nextDeadline, tokenMatches, toOutcomeRecord } from "./callback-checks.js";
import type { ServiceContext } from "./context.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import { createStageSettler } from "./stage-settler.js";
import type { TaskStageService } from "./task-stages.js";
import { parseOrThrow } from "./validate.js";

const MAX_ATTEMPTS = 16;
const UNAUTHORIZED = (): ApiError => new ApiError("unauthorized");
const ALREADY_FINAL = (): ApiError => conflict("The task result has already reached a final status");

/** A result's callback (D17) received: checked, stored with its outcomes in one step, its stage recomputed. */
export function createCallbackReceiver(ctx: ServiceContext, settings: RunTaskSettings, stages: Pick<TaskStageService, "recompute" | "emitResult">) {
  const s = ctx.storage;
  const settle = createStageSettler(stages.recompute);
  /**
   * decision D28: once the result and its outcomes are stored the callback is applied, and answered
   * 200 even if the storage goes away before the stage is recomputed: a 503 would make the
   * integration retry into a 409. The deadline sweep settles such a stage (`listUnsettled`).
   */
  const settleStored = (stageId: string): Promise<void> =>
    settle(stageId).catch((error: unknown) => {
      if (!isStorageUnavailableError(error)) throw error;
      ctx.logger.warn("stage recompute deferred: storage unavailable", { stageId, reason: error.reason });
    });

  /**
   * `PATCH task-results/:id/callback` (D17). Order of checks: unknown id, missing or wrong token
   * 401 alike (D17a: the answer never tells whether the result exists); result already final 409
   * (200 for a repeat of the stored final callback, `isStoredRepeat`);
   * deadline passed 401; only then is the body read
   * (`readBody`, D26: an unauthenticated request never makes the server buffer a body), and an
   * invalid one is 422. The status change and the new outcomes are one compare-and-set: of racing
   * final callbacks exactly one wins, the others get 409; racing `running` callbacks retry on the
   * fresh row, so none loses its outcomes.
   */
  async function receiveCallback(resultId: string, token: string | null, readBody: () => Promise<unknown>): Promise<void> {
    const first = await s.taskResults.get(resultId);
    if (!first || !tokenMatches(first, token)) throw UNAUTHORIZED();
    if (isFinalResultStatus(first.status)) {
      // The first try may have lost its answer before the stage was recomputed: settle it now.
      if (await isStoredRepeat(s, first, await readBody())) return settleStored(first.stageId);
      throw ALREADY_FINAL();
    }
    if (expired(first, ctx.now())) throw UNAUTHORIZED();
    const input = parseOrThrow(CallbackSchema, await readBody(), "");

    let current = first;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = ctx.now();
      // The body may have been slow to arrive: the token must still be valid when the write is made.
      if (expired(current, now)) throw UNAUTHORIZED();
      const t = transitionResult(current, { type: "callback", status: input.status }, now);
      if (!t.ok) throw ALREADY_FINAL();
      await checkResultLimits(s, current, input.outcomes);
      const at = now.toISOString();
      const outcomes = input.outcomes.map((o, i) => toOutcomeRecord(ctx.newId, current.id, current.outcomesCount + i, o, at));
      const next: TaskResultRecord = {
        ...current,
        status: t.status,
        statusTimestamps: t.statusTimestamps,
        message: input.message ?? current.message,
        url: input.url ?? current.url,
        outcomesCount: current.outcomesCount + outcomes.length,
        deadlineAt: nextDeadline(settings.deadline, current, input.status, now),
        version: current.version + 1,
        updatedAt: at,
      };
      const stored = await s.taskResults.transition(current.id, { statuses: [current.status], version: current.version }, next, outcomes);
      if (stored) {
        stages.emitResult(current, stored);
        if (stored.status !== current.status) await settleStored(stored.stageId);
        return;
      }
      const fresh = await s.taskResults.get(resultId);
      // Deleted under the callback: its token stands for nothing any more (D17a).
      if (!fresh) throw UNAUTHORIZED();
      if (isFinalResultStatus(fresh.status)) throw ALREADY_FINAL();
      current = fresh;
    }
    throw new ApiError("conflict", { detail: "The task result is being updated concurrently; retry the request" });
  }

  return receiveCallback;
}
