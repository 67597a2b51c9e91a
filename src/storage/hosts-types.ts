import type { HostRecord } from "../schemas/hosts.js";

/**
 * The hosts using this storage (decision D29a): each runplane instance records the keys it seals
 * with and when it was last alive, so retiring a key can see every host, not only the one that
 * retires it. Timestamps are the core's fixed-width UTC ISO-8601 strings, so comparing them as
 * strings compares instants.
 */
export interface HostStore {
  /**
   * Records `record` as its host's latest beat, in one atomic step: inserts it when no host has its
   * id, otherwise replaces the stored host whole, unless the stored `lastSeenAt` is later than
   * `record.lastSeenAt` (racing beats keep the latest; an equal instant replaces). Resolves `false`
   * when the stored host was kept, `true` when `record` was written.
   */
  beat(record: HostRecord): Promise<boolean>;
  /** Every recorded host, ordered by `id`. */
  list(): Promise<HostRecord[]>;
  /** Removes one host (it stopped cleanly); `false` when there was none. */
  remove(id: string): Promise<boolean>;
  /** Removes every host whose `lastSeenAt` is earlier than `before` (long gone); resolves how many. */
  prune(before: string): Promise<number>;
}
