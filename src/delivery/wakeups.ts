import type { TaskDeliveryService } from "../services/task-deliveries.js";
import type { StopListening } from "../storage/types.js";

/**
 * decision D27: a running dispatcher's wake-ups from every process sharing the storage
 * (`Storage.listen`). Once listening it calls `onWake` once more: rows enqueued between the
 * dispatcher's first pass and the LISTEN taking hold sent no wake-up here. A storage that cannot
 * listen costs a warning; polling carries on alone. Resolves the function that stops listening,
 * or null.
 */
export function subscribeWakeups(deliveries: TaskDeliveryService, onWake: () => void): Promise<StopListening | null> {
  return deliveries.listen(onWake).then(
    (stop) => {
      if (stop) onWake();
      return stop;
    },
    (error: unknown) => {
      deliveries.logger.warn("run task dispatcher hears no wake-ups from other processes; polling only", {
        error: error instanceof Error ? error.name : typeof error,
      });
      return null;
    },
  );
}
