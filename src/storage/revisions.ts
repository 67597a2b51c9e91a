import type { VarOwner } from "../schemas/records.js";

/**
 * Change counters that let the core serve a repeated read from memory without trusting memory:
 * before every cached answer it reads the counters of the scopes the answer depends on from storage,
 * so a write made by any process sharing the storage is seen by the very next request.
 *
 * Contract for an adapter that offers `Storage.revisions`:
 * - `read(scopes)` resolves one counter per scope, in order; a scope never written reads 0.
 * - Every write to a record in a scope increases that scope's counter, in the same transaction as
 *   the write or after it, never before it (a reader that saw the new counter must see the write).
 * - Counters never decrease and are never reset, so a counter value names one state of its scope.
 * - Reads never bump (a counter that moves on every read makes every cached answer a miss).
 * - Bumping more than needed is allowed (it only costs cache hits); bumping less is a stale read.
 */
export interface RevisionStore {
  read(scopes: readonly string[]): Promise<number[]>;
}

/**
 * Everything an API credential's principal and its permissions are computed from: organizations,
 * projects, workspaces, teams and their members, users, policy sets, agent pools, API tokens (except
 * `touch`, which changes no decision) and team project access.
 */
export const DIRECTORY_SCOPE = "directory";

/** The variables (or policy set parameters) of one owner. */
export const variablesScope = (owner: VarOwner): string => `vars:${owner.kind}:${owner.id}`;
