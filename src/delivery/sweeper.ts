import type { TaskDeliveryService } from "../services/task-deliveries.js";
import type { DispatcherFailpoint } from "./attempt.js";

const SWEEP_BATCH = 100;
const MAX_SWEEP_ROUNDS = 50;

/**
 * The deadline sweep (decision D16): results past their deadline become `errored` or
 * `unreachable` and their stages are recomputed; running stages whose results are all final (a
 * stop between a result's write and its stage's) are settled too. A failure is logged, never thrown.
 */
export function createSweeper(deliveries: TaskDeliveryService, failpoint: (name: DispatcherFailpoint) => void | Promise<void>) {
  async function sweep(): Promise<number> {
    let expired = 0;
    try {
      for (let round = 0; round < MAX_SWEEP_ROUNDS; round++) {
        const due = await deliveries.listExpired(SWEEP_BATCH);
        for (const result of due) {
          const stored = await deliveries.expire(result);
          if (!stored) continue;
          expired++;
          await failpoint("during-sweep");
          await deliveries.settle(stored.stageId);
        }
        if (due.length < SWEEP_BATCH) break;
      }
      for (const stage of await deliveries.listUnsettledStages(SWEEP_BATCH)) await deliveries.settle(stage.id);
    } catch (err) {
      deliveries.logger.error("run task deadline sweep failed", { error: err instanceof Error ? err.name : typeof err });
    }
    return expired;
  }
  return { sweep };
}
