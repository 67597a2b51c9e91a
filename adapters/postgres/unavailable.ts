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

/**
 * SQLSTATEs named one by one: a server going away, starting or full, and a database an operator
 * took away without stopping the server (D28): `ALTER DATABASE ... ALLOW_CONNECTIONS false` (55000), a primary that became a read-only
 * standby after a failover (25006), a dropped database (3D000), a lock wait past `lock_timeout`.
 */
const SQLSTATE_REASONS: Readonly<Record<string, string>> = {
  "57P01": "administrator shutdown",
  "57P02": "crash shutdown",
  "57P03": "cannot connect now",
  "57014": "statement canceled",
  "53300": "too many connections",
  "55000": "database not accepting connections",
  "55P03": "lock timeout",
  "25006": "database is read-only",
  "3D000": "database does not exist",
};

/**
 * SQLSTATE classes that mean the database, not the statement: a connection exception (08), too
 * many connections or no memory or disk (53), a shutdown, a cancel or a server not ready (57), a
 * system or I/O error (58), a login refused (28: a changed password, a role removed).
 */
const CLASS_REASONS: Readonly<Record<string, string>> = {
  "08": "connection exception",
  "53": "insufficient resources",
  "57": "operator intervention",
  "58": "system error",
  "28": "login refused",
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
 * what it is.
 */
export function postgresUnavailable(error: unknown): StorageUnavailableError | null {
  if (isStorageUnavailableError(error)) return error;
  if (typeof error !== "object" || error === null) return null;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string") {
    const sqlState = /^[0-9A-Z]{5}$/.test(code);
    const reason = SOCKET_REASONS[code] ?? (sqlState ? (SQLSTATE_REASONS[code] ?? CLASS_REASONS[code.slice(0, 2)]) : undefined);
    if (reason !== undefined) return new StorageUnavailableError(reason, code);
  }
  // Node reports a connection to a name with several addresses as one AggregateError.
  if (error instanceof AggregateError && error.errors.length > 0) return postgresUnavailable(error.errors[0]);
  if (typeof message !== "string") return null;
  const known = MESSAGE_REASONS.find(([text]) => message.startsWith(text));
  return known ? new StorageUnavailableError(known[1]) : null;
}
