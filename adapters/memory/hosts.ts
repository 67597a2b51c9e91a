import type { HostRecord } from "../../src/schemas/hosts.js";
import type { HostStore } from "../../src/storage/hosts-types.js";
import { clone } from "./clone.js";

/** Hosts in memory (decision D29a): each call reads and writes synchronously, so a beat is atomic. */
export function createMemoryHostStore(): HostStore {
  const rows = new Map<string, HostRecord>();
  return {
    async beat(record) {
      const stored = rows.get(record.id);
      if (stored && stored.lastSeenAt > record.lastSeenAt) return false;
      rows.set(record.id, clone(record));
      return true;
    },
    async list() {
      return [...rows.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(clone);
    },
    async remove(id) {
      return rows.delete(id);
    },
    async prune(before) {
      let removed = 0;
      for (const [id, row] of rows) if (row.lastSeenAt < before && rows.delete(id)) removed++;
      return removed;
    },
  };
}
