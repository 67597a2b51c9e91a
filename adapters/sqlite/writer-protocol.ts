import type { AuditEvent } from "../../src/schemas/audit.js";
import { StorageUnavailableError } from "../../src/storage/unavailable.js";
import type { SqliteSynchronousMode } from "./options.js";

/** What the main thread hands the writer thread at start (`workerData`). */
export interface WriterStart {
  path: string;
  synchronous: SqliteSynchronousMode;
  busyTimeoutMs: number;
  /** decision D39: one Int32 state per call in flight (writer-slots.ts), shared with the main thread. */
  slots: SharedArrayBuffer;
  /** decision D56: when given (the statement budget tests), the thread counts its statements into it. */
  statementCount?: SharedArrayBuffer;
}

/**
 * Main thread to writer: one write call, or the order to finish the queue and stop. A call carries
 * the audit event its caller had pending (decision D53), which the thread appends in the call's
 * own savepoint when the write applied.
 */
export type ToWriter = { type: "call"; id: number; slot: number; store: string; method: string; args: unknown[]; audit?: AuditEvent } | { type: "close" };

/** A call's answer: its value, or its error as plain data (an Error's class does not survive the copy). */
export type Outcome = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError };

/** Writer to main thread: ready once its connection is open, then one `group` per COMMIT. */
export type FromWriter = { type: "ready" } | { type: "group"; outcomes: Outcome[] };

export interface WireError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  reason?: string;
}

export function toWireError(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const { code, reason } = error as { code?: unknown; reason?: unknown };
  return {
    name: error.name,
    message: error.message,
    ...(error.stack === undefined ? {} : { stack: error.stack }),
    ...(typeof code === "string" ? { code } : {}),
    ...(typeof reason === "string" ? { reason } : {}),
  };
}

const CLASSES: Record<string, new (message: string) => Error> = { TypeError, RangeError, SyntaxError };

/**
 * The error the in-thread mode would have thrown, rebuilt: a StorageUnavailableError stays one
 * (the API answers it 503, decision D28); any other keeps its class where it is a built-in one,
 * and its `name` and `code` (a `SqliteError` with `SQLITE_CONSTRAINT_*`) otherwise.
 */
export function fromWireError(wire: WireError): Error {
  if (wire.name === "StorageUnavailableError") return new StorageUnavailableError(wire.reason ?? "database unavailable", wire.code);
  const error = new (CLASSES[wire.name] ?? Error)(wire.message);
  if (error.name !== wire.name) Object.defineProperty(error, "name", { value: wire.name, configurable: true, writable: true });
  if (wire.code !== undefined) Object.assign(error, { code: wire.code });
  if (wire.stack !== undefined) error.stack = wire.stack;
  return error;
}
