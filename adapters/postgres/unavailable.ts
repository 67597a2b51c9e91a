import { isStorageUnavailableError, StorageUnavailableError } from "../../src/storage/unavailable.js";

/** Socket errors of a connection that could not be made or was lost (Node's `code`). */
const SOCKET_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ECONNABORTED: "connection reset",
  EPIPE: "connection reset",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "host unreachable",
  ENOTFOUND: "host name not resolved",
  EAI_AGAIN: "host name not resolved",
};

/** SQLSTATEs of a server that is going away, starting, full or waiting on a lock. */
const SQLSTATE_REASONS: Readonly<Record<string, string>> = {
  "57P01": "administrator shutdown",
  "57P02": "crash shutdown",
  "57P03": "cannot connect now",
  "53300": "too many connections",
  "55P03": "lock timeout",
};

/**
 * node-postgres' own errors carry no code, only these messages (pg 8, pg-pool 3): a pool whose
 * connections are all busy past `connectionTimeoutMillis`, a connection the server or the network
 * closed, a client left unusable by such an error, a `query_timeout`.
 */
const MESSAGE_REASONS: readonly (readonly [string, string])[] = [
  ["timeout exceeded when trying to connect", "pool timeout"],
  ["Connection terminated due to connection timeout", "connection timed out"],
  ["Connection terminated unexpectedly", "connection lost"],
  ["Client has encountered a connection error and is not queryable", "connection lost"],
  ["Query read timeout", "query timeout"],
];

/**
 * decision D28: the {@link StorageUnavailableError} that a node-postgres error means, or null when
 * it is a statement's own failure (a constraint, a syntax error, a missing table), which stays
 * what it is. Class 08 (connection exception) is unavailable as a whole.
 */
export function postgresUnavailable(error: unknown): StorageUnavailableError | null {
  if (isStorageUnavailableError(error)) return error;
  if (typeof error !== "object" || error === null) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string") {
    const reason = SOCKET_REASONS[code] ?? SQLSTATE_REASONS[code] ?? (/^08[0-9A-Z]{3}$/.test(code) ? "connection exception" : undefined);
    if (reason !== undefined) return new StorageUnavailableError(reason, code);
  }
  // Node reports a connection to a name with several addresses as one AggregateError.
  if (error instanceof AggregateError && error.errors.length > 0) return postgresUnavailable(error.errors[0]);
  if (typeof message !== "string") return null;
  const known = MESSAGE_REASONS.find(([text]) => message.startsWith(text));
  return known ? new StorageUnavailableError(known[1]) : null;
}
