/**
 * A secondary index for the memory adapter: ids grouped by one key of their record, so a lookup
 * by run, stage, result or token digest reads its own rows instead of walking the whole map (the
 * fan-out bench starts 1,000 stages against tens of thousands of stored results).
 */
export function createIndex<T extends { id: string }>(keyOf: (record: T) => string | null) {
  const groups = new Map<string, Set<string>>();
  return {
    add(record: T): void {
      const key = keyOf(record);
      if (key === null) return;
      let ids = groups.get(key);
      if (!ids) groups.set(key, (ids = new Set()));
      ids.add(record.id);
    },
    remove(record: T): void {
      const key = keyOf(record);
      const ids = key === null ? undefined : groups.get(key);
      if (!ids) return;
      ids.delete(record.id);
      if (ids.size === 0) groups.delete(key!);
    },
    /** The ids filed under `key`, in insertion order. */
    ids(key: string): readonly string[] {
      return [...(groups.get(key) ?? [])];
    },
  };
}
