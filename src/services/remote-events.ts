import type { Logger } from "../logger.js";
import type { StatusChange, StatusChangeFeed, StopListening } from "../storage/notifications.js";

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

export interface RemoteEvents {
  /** A first listener came: subscribe (once; retried with backoff while it fails). */
  want(): void;
  /** The last listener left: unsubscribe, so an idle instance holds no connection. */
  release(): void;
  /** Resolves true once other processes' changes are heard, false when they are not (yet). */
  listening(): Promise<boolean>;
  /** Stops for good (the instance closes). */
  close(): Promise<void>;
}

/**
 * decision D27: the status changes other processes store (`Storage.changes`), heard while
 * `runTasks.on` has listeners. Lazy, because a runplane that nobody listens to should not hold a
 * database connection; retried, because a database that was down when the first listener came
 * must not leave the host deaf for good.
 */
export function createRemoteEvents(feed: StatusChangeFeed | undefined, emit: (change: StatusChange) => void, logger: Logger): RemoteEvents {
  let wanted = false;
  let closed = false;
  let active: Promise<StopListening | null> | null = null;
  let retry: NodeJS.Timeout | undefined;
  let retryMs = FIRST_RETRY_MS;

  function subscribe(): void {
    if (!feed || !wanted || closed || active) return;
    const attempt: Promise<StopListening | null> = feed.subscribe(emit).then(
      (stop) => ((retryMs = FIRST_RETRY_MS), stop),
      (error: unknown) => {
        logger.warn("run task events of other processes are not heard; retrying", { error: error instanceof Error ? error.name : typeof error, retryMs });
        if (active === attempt) {
          active = null;
          retry = setTimeout(subscribe, retryMs);
          retry.unref();
          retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
        }
        return null;
      },
    );
    active = attempt;
  }

  async function unsubscribe(): Promise<void> {
    clearTimeout(retry);
    retry = undefined;
    const current = active;
    active = null;
    const stop = await current;
    await stop?.().catch(() => undefined);
  }

  return {
    want() {
      wanted = true;
      subscribe();
    },
    release() {
      wanted = false;
      void unsubscribe();
    },
    listening: async () => (active ? (await active) !== null : false),
    async close() {
      closed = true;
      wanted = false;
      await unsubscribe();
    },
  };
}
