/** What the direct and the agent dispatcher share besides their parts: a tick's pass and their wake-ups. */
import type { StageStatusEvent } from "../services/run-task-events.js";
import type { TaskDeliveryService } from "../services/task-deliveries.js";
import type { StopListening } from "../storage/types.js";
import type { DispatcherHost, TickReport } from "./dispatcher-options.js";
import type { Launcher } from "./launcher.js";
import { subscribeWakeups } from "./wakeups.js";

/** One pass of `tick()`: claims until nothing new is due, each row attempted once, then sweeps. */
export async function tickOnce(
  deliveries: TaskDeliveryService,
  launcher: Launcher,
  claim: (limit: number) => ReturnType<TaskDeliveryService["claim"]>,
  batchSize: number,
  sweep: () => Promise<number>,
): Promise<TickReport> {
  const report: TickReport = { attempted: 0, delivered: 0, failed: 0, expired: 0 };
  const seen = new Set<string>();
  for (;;) {
    const rows = await claim(batchSize);
    const fresh = rows.filter((r) => !seen.has(r.row.id));
    // A row due again within this tick waits for the next one: one attempt per row per tick.
    await Promise.all(rows.filter((r) => seen.has(r.row.id)).map((r) => deliveries.release(r.row)));
    for (const r of fresh) seen.add(r.row.id);
    for (const outcome of await launcher.runAll(fresh)) {
      if (outcome !== "skipped") report.attempted++;
      if (outcome === "delivered") report.delivered++;
      if (outcome === "failed") report.failed++;
    }
    if (rows.length < batchSize || fresh.length < rows.length) break;
  }
  report.expired = await sweep();
  return report;
}

/**
 * Wake-ups of a running dispatcher: this instance's stages reaching `running`, other processes'
 * (decision D27) and retries asked for here (D31). Resolves a function that stops them all.
 */
export function subscribe(runplane: DispatcherHost, woken: () => void): () => Promise<void> {
  const deliveries = runplane.runTasks.deliveries;
  const started = (e: StageStatusEvent): void => {
    if (e.to === "running") woken();
  };
  const events = runplane.runTasks;
  const unsubscribe = (events.onOwn ? events.onOwn("stage-status", started) : events.on?.("stage-status", started)) ?? ((): void => undefined);
  const listening: Promise<StopListening | null> = subscribeWakeups(deliveries, woken);
  const stopDue = deliveries.attempts.onDue(woken);
  return async () => {
    unsubscribe();
    stopDue();
    const stopListening = await listening;
    await stopListening?.().catch(() => undefined);
  };
}
