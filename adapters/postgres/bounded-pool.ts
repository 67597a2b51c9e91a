import { StorageUnavailableError } from "../../src/storage/unavailable.js";
import type { PgPoolClientLike, PgPoolLike, PgQueryConfig } from "./driver.js";

/**
 * decision D28 for a database that goes silent (a partition, a hung server, packets dropped with
 * no reset): nothing in TCP ends the wait for minutes, and a pool without `connectionTimeoutMillis`
 * waits for a connection forever. The adapter bounds what it asks of the host's pool itself, so a
 * request answers 503 within `timeoutMs` whatever the pool's own options:
 * - a connection not handed over in time is an unavailable storage; when it arrives late it is
 *   closed, never reused;
 * - every statement carries node-postgres' `query_timeout`, which fails it and (the pool or
 *   `transaction()` releasing the client with that error) closes its connection, whose answer
 *   could otherwise arrive for the next statement.
 * The pool's own `query` also waits for a connection, so it is bounded as a whole as well.
 */
export function boundedPool(pool: PgPoolLike, timeoutMs: number, bound: { statements: boolean } = { statements: true }): PgPoolLike {
  if (!(timeoutMs > 0)) return pool;
  // Migrations may run longer than a request's statement should: only their wait for a connection is bounded.
  if (!bound.statements) return { ...forward(pool), connect: () => within(pool.connect(), timeoutMs, "no connection", (late) => late.release(true)) };
  const bounded = (config: PgQueryConfig): PgQueryConfig => ({ ...config, query_timeout: timeoutMs });
  const boundClient = (client: PgPoolClientLike): PgPoolClientLike => ({
    query: (config: PgQueryConfig) => client.query(bounded(config)),
    on: ((event: "error", listener: (error: Error) => void) => client.on(event, listener)) as PgPoolClientLike["on"],
    removeListener: (event, listener) => client.removeListener(event, listener),
    release: (error) => client.release(error),
  });
  return {
    ...forward(pool),
    query: (config) => within(pool.query(bounded(config)), timeoutMs, "no answer"),
    connect: () => within(pool.connect(), timeoutMs, "no connection", (late) => late.release(true)).then(boundClient),
  };
}

/** The pool's own methods, as they are. */
const forward = (pool: PgPoolLike): PgPoolLike => ({
  query: (config) => pool.query(config),
  connect: () => pool.connect(),
  on: (event, listener) => pool.on(event, listener),
  removeListener: (event, listener) => pool.removeListener(event, listener),
  end: () => pool.end(),
});

/** `work`, or a StorageUnavailableError after `ms`; what arrives later is discarded (`late`) or ignored. */
function within<T>(work: Promise<T>, ms: number, what: string, late?: (value: T) => void): Promise<T> {
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new StorageUnavailableError(`${what} within ${ms} ms`, "ETIMEDOUT"));
    }, ms);
  });
  work.then(
    (value) => void (timedOut && late?.(value)),
    () => undefined,
  );
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
