import type { ResultStatus, RunStage, StageStatus } from "../schemas/run-tasks.js";

/** Ends a subscription (`Storage.listen`, `StatusChangeFeed.subscribe`); resolves once it holds nothing. */
export type StopListening = () => Promise<void>;

/**
 * One stored status change of a task stage or a task result, as a storage shared by several
 * processes reports it (decision D27). `from` is the status the row held just before the write,
 * `to` the one written, `at` the written `updatedAt`.
 */
export type StatusChange =
  | {
      kind: "stage";
      stageId: string;
      runId: string;
      workspaceId: string;
      stage: RunStage;
      from: StageStatus;
      to: StageStatus;
      at: string;
    }
  | {
      kind: "result";
      taskResultId: string;
      stageId: string;
      runId: string;
      stage: RunStage;
      from: ResultStatus;
      to: ResultStatus;
      at: string;
    };

/**
 * Status changes stored by other storage instances on the same database (`Storage.changes`), so
 * `runTasks.on(...)` in every process hears every change once (decision D27). Contract for an
 * adapter that offers it:
 * - Every write that changes the status of a stage or a result (`taskStages.transition`,
 *   `taskStages.start`, `taskResults.transition`, a `settle` entry's result advance) is reported
 *   once to every subscription of every other instance, after the write committed, never for a
 *   write that was rolled back, in commit order. A write that leaves the status as it was (a claim
 *   opening a deadline window, a start issuing tokens) is not a change.
 * - An instance's own writes are never reported to its own subscriptions: the core emits those
 *   itself, synchronously, so an echo would be heard twice.
 * - Delivery is best effort: changes stored while a subscription is reconnecting are lost. Stored
 *   state stays the authority; listeners that must not miss a change read it back.
 */
export interface StatusChangeFeed {
  /**
   * Calls `listener` for each change other instances store from now on. Resolves once that holds;
   * rejects when the feed cannot be reached (nothing stays subscribed then).
   */
  subscribe(listener: (change: StatusChange) => void): Promise<StopListening>;
}
