import { safeEqual, sha256Hex } from "../crypto/random.js";
import { SEVERITY_RANK, severityLevelOf, severityOf, statusOf } from "../domain/outcomes.js";
import { isFinalResultStatus, transitionResult } from "../domain/stage-machine.js";
import { ApiError, conflict, invalid } from "../errors.js";
import type { Page, PageRequest } from "../schemas/records.js";
import type { TaskResultOutcomeRecord, TaskResultRecord } from "../schemas/run-task-records.js";
import { isStorageUnavailableError } from "../storage/unavailable.js";
import { CallbackSchema, RESULT_LIMITS, type CallbackInput, type OutcomeInput } from "../schemas/run-tasks.js";
import { toOutcomeView, type OutcomeView } from "../schemas/task-stage-views.js";
import type { ServiceContext } from "./context.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import type { TaskStageService } from "./task-stages.js";
import { parseOrThrow } from "./validate.js";

const MAX_ATTEMPTS = 16;
const UNAUTHORIZED = (): ApiError => new ApiError("unauthorized");
const ALREADY_FINAL = (): ApiError => conflict("The task result has already reached a final status");

export interface VerifiedAccessToken {
  taskResultId: string;
  runId: string;
}

export interface OutcomeListOptions {
  page: PageRequest;
  /** Matches the label of the enriched `severity` tag, case-insensitively (D18). */
  severity?: string;
  /** Matches the label of the enriched `status` tag, case-insensitively (D18). */
  status?: string;
  sort?: "severity";
}

/** Lower-case label of the enriched tag: what `filter[severity]`/`filter[status]` match (D18). */
const label = (entry: { label: string } | null): string | null => (entry === null ? null : entry.label.toLowerCase());

/**
 * At most one stage recompute per stage at a time in this process. Callbacks for the results of
 * one stage tend to land together; each recompute reads every result of the stage, and all but one
 * of the concurrent ones would then lose the stage's compare-and-set and read it again. A caller
 * that finds a pass in flight asks for one more pass after it (which sees its write) and waits
 * for that, so no callback is answered before a recompute that saw its result.
 */
function createStageSettler(recompute: (stageId: string) => Promise<unknown>): (stageId: string) => Promise<void> {
  const passes = new Map<string, { again: boolean; done: Promise<void> }>();
  return (stageId) => {
    const inFlight = passes.get(stageId);
    if (inFlight) {
      inFlight.again = true;
      return inFlight.done;
    }
    const pass = { again: true, done: Promise.resolve() };
    passes.set(stageId, pass);
    pass.done = (async () => {
      try {
        while (pass.again) {
          pass.again = false;
          await recompute(stageId);
        }
      } finally {
        passes.delete(stageId);
      }
    })();
    return pass.done;
  };
}

/** The callback (D17), access tokens, and outcomes (D18). */
export function createTaskCallbackService(ctx: ServiceContext, settings: RunTaskSettings, stages: TaskStageService) {
  const s = ctx.storage;
  const settle = createStageSettler(stages.recompute);
  // decision D16: the window opens at the first delivery attempt; before it there is no deadline.
  const expired = (r: TaskResultRecord, now: Date): boolean => r.deadlineAt !== null && now.getTime() >= Date.parse(r.deadlineAt);
  const tokenMatches = (r: TaskResultRecord, token: string | null): boolean =>
    token !== null && r.accessTokenDigest !== null && safeEqual(sha256Hex(token), r.accessTokenDigest);

  const toOutcomeRecord = (resultId: string, position: number, o: OutcomeInput, at: string): TaskResultOutcomeRecord => ({
    id: ctx.newId("tro"),
    taskResultId: resultId,
    position,
    outcomeId: o.outcomeId,
    description: o.description,
    body: o.body ?? null,
    url: o.url ?? null,
    tags: o.tags,
    severityLabel: label(severityOf(o.tags)),
    severityRank: SEVERITY_RANK[severityLevelOf(o.tags)],
    statusLabel: label(statusOf(o.tags)),
    createdAt: at,
  });

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

  const OUTCOMES_POINTER = "/data/relationships/outcomes/data";
  /**
   * decision D26: at most 1,000 outcomes and 10 MiB of outcome bodies per result, checked against
   * `current`, the version the write then compares-and-sets on (and the body sum read after it;
   * see `TaskResultOutcomeStore.bodyBytes`): racing callbacks cannot together go beyond.
   */
  const checkResultLimits = async (current: TaskResultRecord, added: readonly OutcomeInput[]): Promise<void> => {
    if (added.length === 0) return;
    if (current.outcomesCount + added.length > RESULT_LIMITS.outcomes) {
      throw invalid(
        OUTCOMES_POINTER,
        `A task result holds at most 1,000 outcomes: it has ${current.outcomesCount} and this callback adds ${added.length}`,
      );
    }
    const addedBytes = added.reduce((sum, o) => sum + (o.body === undefined ? 0 : Buffer.byteLength(o.body, "utf8")), 0);
    if (addedBytes === 0) return;
    const storedBytes = await s.taskResultOutcomes.bodyBytes(current.id);
    if (storedBytes + addedBytes > RESULT_LIMITS.bodyBytes) {
      throw invalid(
        OUTCOMES_POINTER,
        `A task result holds at most 10 MiB of outcome bodies: it has ${storedBytes} bytes and this callback adds ${addedBytes}`,
      );
    }
  };

  /** decision D16: with the idle rule a `running` callback restarts the window, capped at the max. */
  const nextDeadline = (r: TaskResultRecord, status: CallbackInput["status"], now: Date): string | null => {
    const rule = settings.deadline;
    if (rule.kind !== "idle" || status !== "running" || r.deadlineMaxAt === null) return r.deadlineAt;
    return new Date(Math.min(now.getTime() + rule.idleMs, Date.parse(r.deadlineMaxAt))).toISOString();
  };

  /**
   * decision D28: a write answered 503 may have been committed (the connection cut after COMMIT), and
   * the integration then sends its final callback again. That callback, the very one stored (same
   * status, message and url where it gives them, and exactly the outcomes stored with the final
   * status), is answered 200 and changes nothing; any other callback to a final result stays 409.
   */
  const isStoredRepeat = async (stored: TaskResultRecord, body: unknown): Promise<boolean> => {
    const parsed = CallbackSchema.safeParse(body);
    if (!parsed.success) return false;
    const input = parsed.data;
    if (input.status !== stored.status) return false;
    if ((input.message !== undefined && input.message !== stored.message) || (input.url !== undefined && input.url !== stored.url)) return false;
    // The final callback's outcomes are those stamped with its time; one more is read to see where they start.
    const take = Math.min(input.outcomes.length + 1, stored.outcomesCount);
    const tail = await s.taskResultOutcomes.list(stored.id, { sort: "position" }, { offset: stored.outcomesCount - take, limit: take });
    const own = tail.items.filter((o) => o.createdAt === stored.updatedAt);
    const same = (o: TaskResultOutcomeRecord, i: OutcomeInput): boolean =>
      o.outcomeId === i.outcomeId && o.description === i.description && o.body === (i.body ?? null) && o.url === (i.url ?? null) && JSON.stringify(o.tags) === JSON.stringify(i.tags);
    return own.length === input.outcomes.length && own.every((o, n) => same(o, input.outcomes[n]!));
  };

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
      if (await isStoredRepeat(first, await readBody())) return settleStored(first.stageId);
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
      await checkResultLimits(current, input.outcomes);
      const at = now.toISOString();
      const outcomes = input.outcomes.map((o, i) => toOutcomeRecord(current.id, current.outcomesCount + i, o, at));
      const next: TaskResultRecord = {
        ...current,
        status: t.status,
        statusTimestamps: t.statusTimestamps,
        message: input.message ?? current.message,
        url: input.url ?? current.url,
        outcomesCount: current.outcomesCount + outcomes.length,
        deadlineAt: nextDeadline(current, input.status, now),
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

  return {
    /** The callback with its body already parsed (the host's trusted code; the route calls `receiveCallback`). */
    callback: (resultId: string, token: string | null, body: unknown): Promise<void> => receiveCallback(resultId, token, async () => body),
    receiveCallback,

    /**
     * The result and run an access token stands for while it is valid (its result not final and
     * its deadline not passed), so the host can authorize plan JSON and configuration downloads.
     */
    async verifyAccessToken(token: string): Promise<VerifiedAccessToken | null> {
      if (typeof token !== "string" || token === "") return null;
      const row = await s.taskResults.findByTokenDigest(sha256Hex(token));
      if (!row || !tokenMatches(row, token) || isFinalResultStatus(row.status) || expired(row, ctx.now())) return null;
      return { taskResultId: row.id, runId: row.runId };
    },

    async listOutcomes(resultId: string, options: OutcomeListOptions): Promise<Page<OutcomeView>> {
      const query = {
        sort: options.sort === "severity" ? ("severity" as const) : ("position" as const),
        ...(options.severity === undefined ? {} : { severity: options.severity.toLowerCase() }),
        ...(options.status === undefined ? {} : { status: options.status.toLowerCase() }),
      };
      const result = await s.taskResultOutcomes.list(resultId, query, options.page);
      return { items: result.items.map(toOutcomeView), total: result.total };
    },
    async getOutcome(id: string): Promise<OutcomeView | null> {
      const row = await s.taskResultOutcomes.get(id);
      return row ? toOutcomeView(row) : null;
    },
  };
}
export type TaskCallbackService = ReturnType<typeof createTaskCallbackService>;
