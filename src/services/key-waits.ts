import { isLive } from "../domain/hosts.js";
import type { Logger } from "../logger.js";
import type { Storage } from "../storage/types.js";
import { shortDuration } from "../domain/short-duration.js";

/** decision D40: at most one warning per key this often, however many rows wait for it. */
export const KEY_WAIT_WARN_MS = 60_000;
/** A key not left for this long is no longer waited for here (its rows went, or another host holds them). */
const STALE_MS = 30_000;

/** decision D40: the keys this host left deliveries for, so a key no live host holds is seen. */
export interface KeyWaits {
  /** A row was left for `keyId`: warns (once per key per KEY_WAIT_WARN_MS) when no live host holds it. */
  left(keyId: string): void;
  /** One line per key left for longer than `forMs` that no live host holds; one host read at most. */
  reasons(forMs: number): Promise<string[]>;
}

export function createKeyWaits(storage: Storage, logger: Logger, now: () => Date): KeyWaits {
  const waits = new Map<string, { since: number; last: number; warnedAt: number | null }>();
  const unheld = async (keyIds: string[]): Promise<string[]> => {
    if (keyIds.length === 0) return [];
    const at = now();
    const live = (await storage.hosts.list()).filter((h) => isLive(h, at));
    return keyIds.filter((id) => !live.some((h) => h.keyIds.includes(id)));
  };
  const current = (t: number) => [...waits].filter(([id, w]) => (t - w.last <= STALE_MS ? true : (waits.delete(id), false)));

  return {
    left(keyId) {
      const t = now().getTime();
      const wait = waits.get(keyId);
      const entry = wait && t - wait.last <= STALE_MS ? { ...wait, last: t } : { since: t, last: t, warnedAt: null };
      const warn = entry.warnedAt === null || t - entry.warnedAt >= KEY_WAIT_WARN_MS;
      waits.set(keyId, warn ? { ...entry, warnedAt: t } : entry);
      if (!warn) return;
      void unheld([keyId]).then(
        (ids) => ids.length > 0 && logger.warn("deliveries wait for a key no live host holds", { keyId, waitingFor: shortDuration(t - entry.since), hint: `start a host whose keyring holds ${keyId}` }),
        () => undefined,
      );
    },
    async reasons(forMs) {
      const t = now().getTime();
      const long = current(t).filter(([, w]) => t - w.since > forMs);
      const ids = await unheld(long.map(([id]) => id)).catch((): string[] => []);
      return long
        .filter(([id]) => ids.includes(id))
        .map(([id, w]) => `deliveries waiting for key ${id}: no live host holds it (for ${shortDuration(t - w.since)}, longer than ${shortDuration(forMs)})`);
    },
  };
}
