import { createHash } from "node:crypto";
import { postgresUnavailable } from "./unavailable.js";
import { BOUNDED_TRANSACTION, type BoundedTransaction } from "./bounded-pool.js";

export type { PgPoolClientLike, PgPoolLike, PgQueryConfig, PgQueryResult, Queryable } from "./pg-types.js";
import type { PgPoolClientLike, PgPoolLike, PgQueryResult, Queryable } from "./pg-types.js";

/**
 * A statement written with named parameters (`@column`, the SQLite adapter's convention, so the
 * shared row mappers bind as they are), compiled once to `$n` placeholders and a prepared name.
 */
export interface Statement {
  readonly text: string;
  readonly names: readonly string[];
  readonly name: string;
}

export function sql(source: string): Statement {
  const names: string[] = [];
  const text = source.replace(/@([a-z_][a-z0-9_]*)/g, (_, name: string) => {
    let index = names.indexOf(name);
    if (index < 0) index = names.push(name) - 1;
    return `$${index + 1}`;
  });
  // Named after the text: two stores compiling the same SQL share the prepared statement, and a
  // different schema (so different text) never collides with it on a shared connection.
  const name = `rp_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
  return { text, names, name };
}

/** Runs `statement` with `params` (by name; a missing one is a programming error). */
export async function run(db: Queryable, statement: Statement, params: object = {}, deadlineAt?: number): Promise<PgQueryResult> {
  const values = statement.names.map((name) => {
    if (!(name in params)) throw new TypeError(`runplane postgres: missing parameter @${name}`);
    return (params as Record<string, unknown>)[name];
  });
  try {
    const config = { name: statement.name, text: statement.text, values };
    return await db.query(deadlineAt === undefined ? config : { ...config, deadlineAt });
  } catch (error) {
    throw toStorageError(error);
  }
}

/** `deadlineAt`: a write group's earliest caller deadline (decision D39). */
export const rowsOf = async <Row>(db: Queryable, statement: Statement, params?: object, deadlineAt?: number): Promise<Row[]> =>
  (await run(db, statement, params, deadlineAt)).rows as Row[];

export const changed = async (db: Queryable, statement: Statement, params?: object): Promise<number> =>
  (await run(db, statement, params)).rowCount ?? 0;

/** A PostgreSQL error as thrown by the adapter: the SQLSTATE and the constraint, never a value. */
export class PostgresStorageError extends Error {
  override readonly name = "PostgresStorageError";
  constructor(
    readonly code: string,
    readonly constraint: string | undefined,
    detail: string,
  ) {
    super(`runplane postgres: ${detail} (SQLSTATE ${code}${constraint ? `, constraint ${constraint}` : ""})`);
  }
}

/** decision D28: a database that cannot be reached is StorageUnavailableError; anything else is sanitized. */
const toStorageError = (error: unknown): unknown => postgresUnavailable(error) ?? sanitize(error);

/**
 * Server errors of class 22 (data) and 23 (integrity) quote values in their message or detail (a
 * duplicate key's detail holds the key, a sensitive one included): those keep only the SQLSTATE
 * and the constraint. Others (a missing table, a lost connection) keep their message.
 */
function sanitize(error: unknown): unknown {
  if (error instanceof PostgresStorageError || typeof error !== "object" || error === null) return error;
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return error;
  const quoted = code.startsWith("22") || code.startsWith("23");
  const detail = quoted ? "statement refused" : String(message);
  return new PostgresStorageError(code, typeof constraint === "string" ? constraint : undefined, detail);
}

export function isViolation(error: unknown, constraint: string): boolean {
  return error instanceof PostgresStorageError && (error.code === "23505" || error.code === "23503") && error.constraint === constraint;
}

/** Thrown inside a transaction to roll it back as a guard's answer; never leaves the adapter. */
export class GuardFailed extends Error {}

/**
 * Runs `fn` in one READ COMMITTED transaction on one connection (under `deadlineAt` on a bounded
 * pool, when given: a write group's earliest caller deadline). While the client is checked out
 * the pool does not listen for its errors, so a connection dropped between two statements would
 * crash the process: a listener covers that stretch, and such a client is destroyed on release.
 */
export async function transaction<R>(pool: PgPoolLike, fn: (client: Queryable) => Promise<R>, deadlineAt?: number): Promise<R> {
  // decision D39: a bounded pool runs it under one deadline, with the server's own timeouts.
  const bounded = (pool as { [BOUNDED_TRANSACTION]?: BoundedTransaction })[BOUNDED_TRANSACTION];
  if (bounded) {
    try {
      return await bounded(fn, deadlineAt);
    } catch (error) {
      throw toStorageError(error);
    }
  }
  let client: PgPoolClientLike;
  try {
    client = await pool.connect();
  } catch (error) {
    throw toStorageError(error);
  }
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on("error", onError);
  try {
    await client.query({ text: "BEGIN" });
    const value = await fn(client);
    await client.query({ text: "COMMIT" });
    return value;
  } catch (error) {
    await client.query({ text: "ROLLBACK" }).catch((rollbackError: unknown) => {
      broken ??= rollbackError instanceof Error ? rollbackError : new Error("rollback failed");
    });
    throw toStorageError(error);
  } finally {
    client.removeListener("error", onError);
    client.release(broken ?? false);
  }
}

const RETRYABLE = new Set(["40P01", "40001"]);

/**
 * Retries a whole call a few times when PostgreSQL aborted it as a deadlock victim or a
 * serialization failure: safe only for calls that are one transaction, rolled back whole.
 */
export async function retrying<R>(fn: () => Promise<R>, attempts = 4): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const code = error instanceof PostgresStorageError ? error.code : undefined;
      if (attempt >= attempts || code === undefined || !RETRYABLE.has(code)) throw error;
    }
  }
}
