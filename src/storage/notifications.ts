import type { ResultStatus, RunStage, StageStatus } from "../schemas/run-tasks.js";

/** Ends a subscription (`Storage.listen`, `StatusChangeFeed.subscribe`); resolves once it holds nothing. */
export type StopListening = () => Promise<void>;

/** A task stage's stored status change (decision D27); `runTasks.on("stage-status")` hears it without `kind`. */
export interface StageStatusChange {
  kind: "stage";
  stageId: string;
  runId: string;
  workspaceId: string;
  stage: RunStage;
  /** The status the row held just before the write. */
  from: StageStatus;
  to: StageStatus;
  /** ISO-8601 time of the change (the written `updatedAt`). */
  at: string;
}

/** A task result's stored status change; `runTasks.on("result-status")` hears it without `kind`. */
export interface ResultStatusChange {
  kind: "result";
  taskResultId: string;
  stageId: string;
  runId: string;
  stage: RunStage;
  from: ResultStatus;
  to: ResultStatus;
  at: string;
}

/** One stored status change of a task stage or a task result, as a storage shared by several processes reports it. */
export type StatusChange = StageStatusChange | ResultStatusChange;

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

/**
 * Optional short messages between the processes sharing the storage (`Storage.relay`), for work
 * one host asks of another: a pool task's verification sent through an agent polling another host
 * (decision D34). Contract for an adapter that offers it:
 * - `publish(message)` reaches every subscription of every OTHER instance (never its own), after
 *   the call resolves; messages of at most {@link RELAY_MAX_CHARS} characters.
 * - Delivery is best effort and unordered across publishers: a message sent while a subscription
 *   reconnects is lost, so whoever waits for an answer gives up after a bound.
 */
export interface MessageRelay {
  publish(message: string): Promise<void>;
  subscribe(listener: (message: string) => void): Promise<StopListening>;
}

/** The longest relay message (PostgreSQL's NOTIFY takes 8000 bytes, with room for the envelope). */
export const RELAY_MAX_CHARS = 7_000;
