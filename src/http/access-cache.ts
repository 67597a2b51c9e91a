/**
 * Who an API token is and what it may do, remembered for one state of the directory (D21).
 * Every request re-read the token, its team, the target's workspace and project and the team's
 * grants before acting: on PostgreSQL 3.25 statements of an HTTP write's 3.7. An entry is keyed by
 * the token's digest (and the action and target) and stamped with the `directory` revision read
 * at the start of the request, which every input of a principal or a decision bumps
 * (src/storage/revisions.ts); a request whose revision differs reads everything again, so a revoked
 * token, a removed member or grant, or a moved workspace applies to the very next request, from
 * any process sharing the storage (D21). Only authenticated principals are kept, at most
 * `maxEntries`, least recently used first out, none longer than `maxAgeMs` (the token's
 * `last-used-at` is written when it is read again).
 */
export interface AccessCache {
  get<T>(key: string, stamp: number): T | undefined;
  set(key: string, stamp: number, value: unknown): void;
  readonly size: number;
}

export function createAccessCache(options: { maxEntries?: number; maxAgeMs: number; now: () => number }): AccessCache {
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, { stamp: number; value: unknown; storedAt: number }>();
  return {
    get<T>(key: string, stamp: number): T | undefined {
      const entry = entries.get(key);
      if (!entry) return undefined;
      entries.delete(key);
      if (entry.stamp !== stamp || options.now() - entry.storedAt >= options.maxAgeMs) return undefined;
      entries.set(key, entry);
      return entry.value as T;
    },
    set(key, stamp, value) {
      entries.delete(key);
      entries.set(key, { stamp, value, storedAt: options.now() });
      for (const oldest of entries.keys()) {
        if (entries.size <= maxEntries) break;
        entries.delete(oldest);
      }
    },
    get size() {
      return entries.size;
    },
  };
}
