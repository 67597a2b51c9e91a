/**
 * Request texts this process has just sealed into its outbox, kept for its own first attempt of
 * each: opening a sealed payload cost 20 us of a delivery's CPU on the memory adapter,
 * and the process that starts a stage is usually the one that sends its requests. Another
 * process, a retry, or an entry evicted or expired opens the stored value as before, so nothing
 * depends on the cache.
 *
 * The texts hold their result's access token (D17), which the process had in the clear anyway
 * when it built them. They are kept only while a dispatcher of this instance exists (`hold`), in
 * memory only, until taken, pushed out by newer ones (at most `maxChars`, oldest first) or older
 * than `maxAgeMs` (a process's own first attempt comes within milliseconds); they never reach
 * storage or logs (D11).
 */
export interface FreshPayloadOptions {
  maxChars?: number;
  maxAgeMs?: number;
  now: () => number;
}

export function createFreshPayloads({ maxChars = 16 * 1024 * 1024, maxAgeMs = 60_000, now }: FreshPayloadOptions) {
  const held = new Map<string, { text: string; at: number }>();
  // Ids in the order kept, oldest from `head`: a Map iterated from its start after many deletions
  // walks their holes first, so eviction reads this list instead. Taken ids are skipped here and
  // the list is rebuilt from `held` when mostly stale.
  let order: string[] = [];
  let head = 0;
  let chars = 0;
  let holders = 0;
  const drop = (id: string, text: string): void => {
    held.delete(id);
    chars -= text.length;
  };
  /** Drops from the oldest while over the bound for `size` more characters, or older than maxAgeMs. */
  const evict = (size: number): void => {
    const expired = now() - maxAgeMs;
    while (head < order.length) {
      const id = order[head]!;
      const entry = held.get(id);
      if (entry && chars + size <= maxChars && entry.at > expired) break;
      head++;
      if (entry) drop(id, entry.text);
    }
    if (order.length - head > 2 * held.size + 1024) (order = [...held.keys()]), (head = 0);
  };
  return {
    /** Keeps texts while the returned function has not been called (a dispatcher's life); the last release forgets all. */
    hold(): () => void {
      holders++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (--holders === 0) held.clear(), (order = []), (head = 0), (chars = 0);
      };
    },
    /** Keeps the texts of rows just stored (never before the write commits: a lost start sends nothing). */
    keep(rows: Iterable<{ id: string; text: string }>): void {
      if (holders === 0) return;
      for (const { id, text } of rows) {
        if (text.length > maxChars) continue;
        evict(text.length);
        held.set(id, { text, at: now() });
        order.push(id);
        chars += text.length;
      }
    },
    /** The text of `deliveryId` when this process still holds it, removed: each is used once. */
    take(deliveryId: string): string | undefined {
      evict(0);
      const entry = held.get(deliveryId);
      if (entry !== undefined) drop(deliveryId, entry.text);
      return entry?.text;
    },
    /** Texts held now (tests, metrics). */
    size: (): number => held.size,
  };
}
export type FreshPayloads = ReturnType<typeof createFreshPayloads>;
