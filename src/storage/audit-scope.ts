import { AsyncLocalStorage } from "node:async_hooks";
import type { AuditEvent } from "../schemas/audit.js";

/**
 * decision D53: how an audit event reaches the transaction of its change. The core runs the one
 * storage write inside `withAuditEvent`; the adapter's write takes the event (once: a second write
 * in the scope gets none) when it is called, and appends it in the write's own transaction only
 * when the write applied (see `isApplied`). A refused or failed write leaves no event, and an event
 * never exists without its change.
 */
interface Scope {
  event: AuditEvent;
  taken: boolean;
}

const scope = new AsyncLocalStorage<Scope>();

export function withAuditEvent<R>(event: AuditEvent, fn: () => R): R {
  return scope.run({ event, taken: false }, fn);
}

/** The pending event of the current scope, taken so no other write records it too; undefined when none. */
export function takeAuditEvent(): AuditEvent | undefined {
  const current = scope.getStore();
  if (!current || current.taken) return undefined;
  current.taken = true;
  return current.event;
}

/**
 * Whether a storage write's answer means it changed something: `false`, `null`, `0` and
 * `{ ok: false }` (a guard that no longer held) did not; anything else (`true`, a count, a
 * record, `{ ok: true }`, no value) did.
 */
export function isApplied(result: unknown): boolean {
  if (result === false || result === null || result === 0) return false;
  if (typeof result === "object" && result !== undefined && (result as { ok?: unknown }).ok === false) return false;
  return true;
}

/**
 * The writes that may carry an event (memory and PostgreSQL wrap exactly these; SQLite's write
 * transactions take one wherever it is pending).
 */
export const AUDITED_WRITES = {
  variables: ["insert", "update", "delete", "deleteByOwner"],
  teamProjects: ["insert", "update", "delete", "deleteByTeam", "deleteByProject"],
  apiTokens: ["insert", "delete"],
  agentTokens: ["insert", "delete"],
  agents: ["insert", "ping", "setStatus", "delete"],
  runTasks: ["insert", "update", "delete"],
  workspaceTasks: ["insert", "update", "delete"],
  taskStages: ["transition"],
  sealedValues: ["replace"],
  // decision D53 (change of 2026-11-29): the host's directory (a team raised to owners, its members).
  organizations: ["insert", "replace", "delete"],
  teams: ["insert", "replace", "delete"],
  projects: ["insert", "replace", "delete"],
  workspaces: ["insert", "replace", "delete"],
  policySets: ["insert", "replace", "delete"],
  agentPools: ["insert", "replace", "delete"],
} as const;
