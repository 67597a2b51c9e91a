import type { PgPoolClientLike, PgPoolLike, PgQueryConfig, PgQueryResult, Queryable } from "./pg-types.js";
import { requestDeadline, type OperationDeadline } from "../../src/storage/request-deadline.js";
import { postgresUnavailable } from "./unavailable.js";
import { cancelKeyOf, checkout, confirmMarginMs, Deadline, sendCancel, unavailable, within } from "./deadline.js";

/** Where a bounded pool keeps its transaction runner (a symbol: an embedder's pool may have a `transaction` of its own). */
export const BOUNDED_TRANSACTION = Symbol("runplane.boundedTransaction");

/** Where a bounded pool tells a write group the deadline of the caller asking now (decision D39). */
export const DEADLINE_OF = Symbol("runplane.deadlineOf");

/** The deadline of the operation a caller asks for now, or undefined for a pool without a bound. */
export const deadlineOf = (pool: PgPoolLike): OperationDeadline | undefined => (pool as { [DEADLINE_OF]?: () => OperationDeadline })[DEADLINE_OF]?.();

/** `deadlineAt`: a group's earliest caller deadline (decision D39); without it, the request's own. */
export type BoundedTransaction = <R>(fn: (client: Queryable) => Promise<R>, deadlineAt?: number) => Promise<R>;

/**
 * decision D28 and D39: a request answers 503 within `timeoutMs` (plus a small margin) whatever the
 * host pool's options, and a write answered 503 is not and will not be applied.
 * - One storage time budget per API request (src/storage/request-deadline.ts), or the whole
 *   bound per operation outside one, covers every wait for a connection and every statement; a
 *   connection handed over late is closed, never reused; an operation asked for with the budget
 *   spent is refused without a statement.
 * - A transaction sends `SET LOCAL statement_timeout` and `lock_timeout` (the time left) in the
 *   round trip of its BEGIN, so the server ends its own waits. When the deadline passes before
 *   COMMIT was sent, the connection is closed and the answer is 503 at once: a transaction whose
 *   COMMIT never reached the server is never applied. When it passes during COMMIT, COMMIT's own
 *   answer is awaited for a margin (D28's one ambiguity is a server silent past it).
 * - An autocommit statement commits by itself the moment it ends, so when the deadline passes the
 *   adapter sends PostgreSQL's CancelRequest and answers with the statement's own outcome: 57014
 *   (cancelled, nothing applied: 503), or its result when it finished first. A client without a
 *   cancel key (an embedder's own type) runs the statement as a transaction instead.
 * The pool's own `query` is not used: it would hide which connection runs the statement.
 */
export function boundedPool(pool: PgPoolLike, timeoutMs: number, bound: { statements: boolean } = { statements: true }): PgPoolLike {
  if (!(timeoutMs > 0)) return pool;
  // Migrations may run longer than a request's statement should: only their wait for a connection is bounded.
  if (!bound.statements) return { ...forward(pool), connect: () => checkoutAlone(pool, timeoutMs) };
  const margin = confirmMarginMs(timeoutMs);
  const operation = async <R>(at: number | undefined, work: (client: PgPoolClientLike, deadline: Deadline) => Promise<R>): Promise<R> => {
    const budget = at === undefined ? requestDeadline(timeoutMs) : null;
    const end = at ?? budget!.at;
    // A request whose storage time is spent sends nothing more: its answer is 503 now.
    if (end <= Date.now()) throw (budget?.end(), unavailable(`request past its ${timeoutMs} ms of storage time`));
    const deadline = new Deadline(end);
    try {
      const client = await checkout(pool, deadline, timeoutMs);
      return await work(client, deadline);
    } finally {
      deadline.end();
      budget?.end();
    }
  };
  const transaction: BoundedTransaction = (fn, deadlineAt) => operation(deadlineAt, (client, deadline) => transact(client, deadline, margin, fn));
  return Object.assign(
    {
      ...forward(pool),
      query: ({ deadlineAt, ...config }: PgQueryConfig) =>
        operation(deadlineAt, (client, deadline) =>
          cancelKeyOf(client) ? autocommit(client, config, deadline, margin) : transact(client, deadline, margin, (c) => c.query(config)),
        ),
      connect: () => checkoutAlone(pool, timeoutMs),
    },
    { [BOUNDED_TRANSACTION]: transaction, [DEADLINE_OF]: () => requestDeadline(timeoutMs) },
  );
}

/** A connection held beyond one operation (the LISTEN connection, migrations): only its wait is bounded. */
function checkoutAlone(pool: PgPoolLike, timeoutMs: number): Promise<PgPoolClientLike> {
  const deadline = new Deadline(Date.now() + timeoutMs);
  return checkout(pool, deadline, timeoutMs).finally(() => deadline.end());
}

/** One autocommit statement on `client`, confirmed cancelled when the deadline passes first; releases the client. */
async function autocommit(client: PgPoolClientLike, config: PgQueryConfig, deadline: Deadline, margin: number): Promise<PgQueryResult> {
  let broken: Error | boolean = false;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on("error", onError);
  try {
    const pending = client.query(config);
    return await deadline.race(pending, () => {
      // Whatever the cancel hits, this connection is not reused: a late cancel must not hit the next statement.
      broken = true;
      sendCancel(cancelKeyOf(client)!);
      return within(pending, margin, () => Promise.reject(unavailable("statement past its deadline, its cancel unconfirmed")));
    });
  } catch (error) {
    // A connection the server ended (57P01 after pg_terminate_backend) may fail its statement before
    // its "error" event: it must not go back to the pool for the next statement to fail on too.
    if (postgresUnavailable(error)) broken = true;
    throw error;
  } finally {
    client.removeListener("error", onError);
    client.release(broken);
  }
}

/** Runs `fn` in one transaction on `client` under `deadline` (see boundedPool); releases the client. */
async function transact<R>(client: PgPoolClientLike, deadline: Deadline, margin: number, fn: (client: Queryable) => Promise<R>): Promise<R> {
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on("error", onError);
  const late = (): Promise<never> => Promise.reject(unavailable("transaction past its deadline, rolled back"));
  const send = (config: PgQueryConfig): Promise<PgQueryResult> => (deadline.expired ? late() : deadline.race(client.query(config), late));
  try {
    const ms = deadline.remaining();
    await send({ text: `BEGIN; SET LOCAL statement_timeout = ${ms}; SET LOCAL lock_timeout = ${ms}` });
    const value = await fn({ query: send });
    if (deadline.expired) return await late();
    const commit = client.query({ text: "COMMIT" });
    await deadline.race(commit, () => within(commit, margin, () => Promise.reject(unavailable("no answer to COMMIT"))));
    return value;
  } catch (error) {
    // Past the deadline the connection is closed instead of rolled back: a ROLLBACK would queue
    // behind the statement still waiting, and a transaction without COMMIT is never applied.
    if (deadline.expired) broken ??= error instanceof Error ? error : new Error("past the deadline");
    else
      await client.query({ text: "ROLLBACK" }).catch((rollbackError: unknown) => {
        broken ??= rollbackError instanceof Error ? rollbackError : new Error("rollback failed");
      });
    throw error;
  } finally {
    client.removeListener("error", onError);
    client.release(broken ?? false);
  }
}

/** The pool's own methods, as they are. */
const forward = (pool: PgPoolLike): PgPoolLike => ({
  query: (config) => pool.query(config),
  connect: () => pool.connect(),
  on: (event, listener) => pool.on(event, listener),
  removeListener: (event, listener) => pool.removeListener(event, listener),
  end: () => pool.end(),
});
