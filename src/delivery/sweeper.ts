import type { TaskDeliveryService } from "../services/task-deliveries.js";
import type { DispatcherFailpoint } from "./attempt.js";

const SWEEP_BATCH = 100;
const MAX_SWEEP_ROUNDS = 50;
/**
 * How often a background sweep also looks for running stages whose results are all final. That
 * query walks every running stage (a stage waits up to the deadline for its callbacks, so a busy
 * host has thousands), and what it finds is rare: a process stopped between a result's write and
 * its stage's. Once every 30 s keeps the sweep's cost flat in the backlog (Outbox depth bench).
 */
export const UNSETTLED_SCAN_MS = 30_000;
/** How often a background sweep also prunes delivery attempts past their retention (D31): they age in days, not seconds. */
export const ATTEMPT_PRUNE_MS = 60_000;

/**
 * The deadline sweep (decision D16): results past their deadline become `errored` or
 * `unreachable` and their stages are recomputed; running stages whose results are all final (a
 * stop between a result's write and its stage's) are settled too; delivery attempts older than
 * the retention are pruned (D31), and so are agents silent past theirs (D46). A failure is logged,
 * never thrown.
 */
export function createSweeper(deliveries: TaskDeliveryService, failpoint: (name: DispatcherFailpoint) => void | Promise<void>) {
  /** `unsettled: false` skips the scan for stages left running (UNSETTLED_SCAN_MS), `prune: false` the attempts' (ATTEMPT_PRUNE_MS). */
  async function sweep({ unsettled = true, prune = true }: { unsettled?: boolean; prune?: boolean } = {}): Promise<number> {
    let expired = 0;
    try {
      for (let round = 0; round < MAX_SWEEP_ROUNDS; round++) {
        const due = await deliveries.listExpired(SWEEP_BATCH);
        for (const result of due) {
          const stored = await deliveries.expire(result);
          if (!stored) continue;
          expired++;
          deliveries.logger.warn(`run task result past its deadline: ${stored.status}`, {
            event: "deadline.expired",
            taskResultId: stored.id,
            stageId: stored.stageId,
            runId: stored.runId,
            deadlineAt: result.deadlineAt,
            to: stored.status,
          });
          await failpoint("during-sweep");
          await deliveries.settle(stored.stageId);
        }
        if (due.length < SWEEP_BATCH) break;
      }
      if (unsettled) for (const stage of await deliveries.listUnsettledStages(SWEEP_BATCH)) await deliveries.settle(stage.id);
      if (prune) {
        const pruned = await deliveries.attempts.prune();
        if (pruned > 0) deliveries.logger.debug("delivery attempts past their retention removed", { event: "attempts.pruned", count: pruned });
        // decision D46: agents silent for longer than their retention, on the same slow beat.
        const agents = await deliveries.pruneAgents();
        if (agents > 0) deliveries.logger.info("agents silent past their retention removed", { event: "agents.pruned", count: agents });
        // decision D53: audit events past `audit.retention`, as rarely as the attempts.
        const events = await deliveries.pruneAudit();
        if (events > 0) deliveries.logger.debug("audit events past their retention removed", { event: "audit.pruned", count: events });
      }
    } catch (err) {
      deliveries.logger.error("run task deadline sweep failed", { error: err instanceof Error ? err.name : typeof err });
    }
    return expired;
  }
  return { sweep };
}
