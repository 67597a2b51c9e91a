import type { Logger } from "../logger.js";
import type { ResultStatusChange, StageStatusChange, StatusChange, StatusChangeFeed } from "../storage/notifications.js";
import { createRemoteEvents } from "./remote-events.js";

/** A task stage changed status; emitted after the change is stored. */
export interface StageStatusEvent extends Omit<StageStatusChange, "kind"> {}

/** A task result changed status; emitted after the change is stored. */
export interface ResultStatusEvent extends Omit<ResultStatusChange, "kind"> {}

export interface RunTaskEvents {
  "stage-status": StageStatusEvent;
  "result-status": ResultStatusEvent;
}

export type RunTaskListener<E extends keyof RunTaskEvents> = (event: RunTaskEvents[E]) => void | Promise<void>;

/**
 * A small typed emitter. Listeners run after the change is stored, in registration order; a
 * listener that throws or rejects is logged (by name only) and never fails the request or the
 * other listeners. Async listeners are not awaited: the host's side effects cannot hold a request.
 * With a `feed` (decision D27) the changes other processes store are emitted too, while there
 * are listeners; this instance's own changes come from the services, so each is heard once.
 */
export function createRunTaskEmitter(logger: Logger, feed?: StatusChangeFeed) {
  const listeners: { [E in keyof RunTaskEvents]: Set<RunTaskListener<E>> } = {
    "stage-status": new Set(),
    "result-status": new Set(),
  };
  // `onOwn` listeners: this instance's changes only, so they never make it listen to the others.
  const own: typeof listeners = { "stage-status": new Set(), "result-status": new Set() };
  const report = (event: string, error: unknown): void => {
    logger.error("run task event listener failed", { event, error: error instanceof Error ? error.name : typeof error });
  };
  const count = (): number => listeners["stage-status"].size + listeners["result-status"].size;
  // Another process's change, emitted to `on` listeners exactly like one of ours.
  const emitChange = (change: StatusChange): void => {
    if (change.kind === "stage") {
      const { kind: _, ...event } = change;
      call(listeners, "stage-status", event);
    } else {
      const { kind: _, ...event } = change;
      call(listeners, "result-status", event);
    }
  };
  const remote = createRemoteEvents(feed, emitChange, logger);
  /** One of this instance's own changes: every listener hears it. */
  function emit<E extends keyof RunTaskEvents>(event: E, payload: RunTaskEvents[E]): void {
    call(own, event, payload);
    call(listeners, event, payload);
  }
  function call<E extends keyof RunTaskEvents>(from: typeof listeners, event: E, payload: RunTaskEvents[E]): void {
    for (const listener of [...(from[event] as Set<RunTaskListener<E>>)]) {
      try {
        const pending = listener(payload);
        if (pending && typeof (pending as Promise<void>).catch === "function") (pending as Promise<void>).catch((e) => report(event, e));
      } catch (error) {
        report(event, error);
      }
    }
  }
  return {
    /** Subscribes; returns a function that unsubscribes. */
    on<E extends keyof RunTaskEvents>(event: E, listener: RunTaskListener<E>): () => void {
      const set = listeners[event] as Set<RunTaskListener<E>>;
      set.add(listener);
      if (count() === 1) remote.want();
      return () => {
        if (set.delete(listener) && count() === 0) remote.release();
      };
    },
    /**
     * Like `on`, but hears only this instance's own changes, and never makes it listen to other
     * processes: a dispatcher wakes on its own stage starts this way, while the storage's wake-ups
     * bring the other processes' (so no host parses every other host's changes).
     */
    onOwn<E extends keyof RunTaskEvents>(event: E, listener: RunTaskListener<E>): () => void {
      const set = own[event] as Set<RunTaskListener<E>>;
      set.add(listener);
      return () => void set.delete(listener);
    },
    emit,
    /** Resolves true once changes stored by other processes are heard (D27); false without a feed or listeners. */
    listening: remote.listening,
    /** Stops hearing other processes for good. */
    close: remote.close,
  };
}
export type RunTaskEmitter = ReturnType<typeof createRunTaskEmitter>;
