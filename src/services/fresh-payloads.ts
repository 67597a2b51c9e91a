/**
 * Request texts this process has just sealed into its outbox, kept for its own first attempt of
 * each (issue 28): opening a sealed payload cost 20 us of a delivery's CPU on the memory adapter,
 * and the process that starts a stage is usually the one that sends its requests. Another
 * process, a retry, or an entry evicted under the bound opens the stored value as before, so
 * nothing depends on the cache.
 *
 * The texts hold their result's access token (D17), which the process had in the clear anyway
 * when it built them; they live in memory only, until taken or pushed out by newer ones (at most
 * `maxChars`, oldest first), and never reach storage or logs (D11).
 */
export function createFreshPayloads(maxChars = 16 * 1024 * 1024) {
  const held = new Map<string, string>();
  // Ids in the order kept, oldest from `head`: a Map iterated from its start after many deletions
  // walks their holes first, so eviction reads this list instead. Taken ids are skipped here and
  // the list is rebuilt from `held` when mostly stale.
  let order: string[] = [];
  let head = 0;
  let chars = 0;
  const drop = (id: string, text: string): void => {
    held.delete(id);
    chars -= text.length;
  };
  const evictFor = (size: number): void => {
    while (chars + size > maxChars && head < order.length) {
      const id = order[head++]!;
      const text = held.get(id);
      if (text !== undefined) drop(id, text);
    }
    if (order.length - head > 2 * held.size + 1024) (order = [...held.keys()]), (head = 0);
  };
  return {
    /** Keeps the texts of rows just stored (never before the write commits: a lost start sends nothing). */
    keep(rows: Iterable<{ id: string; text: string }>): void {
      for (const { id, text } of rows) {
        if (text.length > maxChars) continue;
        evictFor(text.length);
        held.set(id, text);
        order.push(id);
        chars += text.length;
      }
    },
    /** The text of `deliveryId` when this process still holds it, removed: each is used once. */
    take(deliveryId: string): string | undefined {
      const text = held.get(deliveryId);
      if (text !== undefined) drop(deliveryId, text);
      return text;
    },
    /** Texts held now (tests, metrics). */
    size: (): number => held.size,
  };
}
export type FreshPayloads = ReturnType<typeof createFreshPayloads>;
