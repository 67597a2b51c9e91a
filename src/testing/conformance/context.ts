import type { Storage } from "../../storage/types.js";

/** What an adapter's test file hands to `runStorageConformance`, once per case. */
export interface ConformanceHandle {
  storage: Storage;
  /**
   * Closes and reopens a persistent store and resolves the new Storage. A store with nothing to
   * reopen (memory, SQLite `:memory:`) resolves the same storage. Optional for custom adapters:
   * without it the durability cases are skipped, each with the reason.
   */
  reopen?(): Promise<Storage>;
  /** Closes whatever storage is current and removes the case's state. Default: `storage.close()`. */
  dispose?(): Promise<void>;
}

export type ConformanceSetup = () => Promise<ConformanceHandle>;

/** What a case sees: the current storage (it follows `reopen`). */
export interface ConformanceContext {
  readonly storage: Storage;
  reopen(): Promise<Storage>;
}

/** Starts `count` calls in the same tick and resolves all their results, in call order. */
export function race<T>(count: number, call: (index: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: count }, (_, index) => call(index)));
}

/** How many results equal `true` or are `{ ok: true }`. */
export function wins(results: readonly (boolean | { ok: boolean })[]): number {
  return results.filter((r) => (typeof r === "boolean" ? r : r.ok)).length;
}

/** JS's default (UTF-16 code unit) order: the order "ordered by id" means in every adapter. */
export function byId<T extends { id: string }>(records: readonly T[]): T[] {
  return [...records].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
