import { sha256Hex } from "../crypto/random.js";
import { isFinalResultStatus } from "../domain/stage-machine.js";
import type { Page, PageRequest } from "../schemas/records.js";
import { toOutcomeView, type OutcomeView } from "../schemas/task-stage-views.js";
import { createCallbackReceiver } from "./callback-receiver.js";
import { expired, tokenMatches } from "./callback-checks.js";
import type { ServiceContext } from "./context.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import type { TaskStageService } from "./task-stages.js";

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

/** The callback (D17), access tokens, and outcomes (D18). */
export function createTaskCallbackService(ctx: ServiceContext, settings: RunTaskSettings, stages: TaskStageService) {
  const s = ctx.storage;
  const receiveCallback = createCallbackReceiver(ctx, settings, stages);

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
