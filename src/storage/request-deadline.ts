import { AsyncLocalStorage } from "node:async_hooks";

/**
 * decision D39: one storage time budget per API request. The HTTP handler runs each request in a
 * scope; a storage adapter with a bound (PostgreSQL's `timeoutMs`) gives every operation of the
 * request (its waits for a connection and its statements) the bound less the time the request's
 * earlier operations took, so a request's answer comes within the bound plus a margin however
 * many reads precede its write. Time the request spends outside storage (an agent's long poll, an
 * outbound request) is not counted. Outside a request (the dispatcher, an embedder's direct call)
 * each operation has the whole bound.
 */
const scope = new AsyncLocalStorage<{ spent: number }>();

/** Runs `fn` as one request: the storage operations it starts share one budget. */
export const withRequestDeadline = <T>(fn: () => Promise<T>): Promise<T> => scope.run({ spent: 0 }, fn);

export interface OperationDeadline {
  /** When the operation starting now must end (ms since the epoch). */
  at: number;
  /** Counts the operation's time against its request's budget; call once, when it ended. */
  end(): void;
}

const nothing = (): void => undefined;

/** The deadline of the storage operation starting now under a bound of `timeoutMs` per request. */
export function requestDeadline(timeoutMs: number): OperationDeadline {
  const request = scope.getStore();
  const start = Date.now();
  if (request === undefined) return { at: start + timeoutMs, end: nothing };
  return { at: start + timeoutMs - request.spent, end: () => void (request.spent += Date.now() - start) };
}

/**
 * Runs `fn` outside any request's budget (decision D34): a verification waiting for an agent of a
 * pool has its own bound, and the storage operations it starts each get the whole bound.
 */
export const outsideRequestDeadline = <T>(fn: () => Promise<T>): Promise<T> => scope.exit(fn);
