import { AsyncLocalStorage } from "node:async_hooks";

/**
 * decision D39: one deadline per API request for the storage work it causes. The HTTP handler runs
 * each request in a scope; a storage adapter with a bound (PostgreSQL's `timeoutMs`) fixes the
 * deadline at the request's first storage operation and every later operation of the request
 * (connection waits and statements) shares it, so a request's answer comes within the bound plus a
 * margin however many reads precede its write. Outside a request (the dispatcher, an embedder's
 * direct call) each operation has a deadline of its own.
 */
const scope = new AsyncLocalStorage<{ at?: number }>();

/** Runs `fn` as one request: the storage operations it starts share one deadline. */
export const withRequestDeadline = <T>(fn: () => Promise<T>): Promise<T> => scope.run({}, fn);

/** The deadline (ms since the epoch) of the storage operation starting now under a bound of `timeoutMs`. */
export function requestDeadline(timeoutMs: number): number {
  const request = scope.getStore();
  if (request === undefined) return Date.now() + timeoutMs;
  return (request.at ??= Date.now() + timeoutMs);
}
