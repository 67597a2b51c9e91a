import type { AgentRecord } from "../../src/schemas/agents.js";
import type { AgentStore } from "../../src/storage/agents-types.js";
import { clone } from "./clone.js";
import { byCreation, page } from "./ordering.js";

/** Agents in memory (decision D34): each call reads and writes synchronously, so each is atomic. */
export function createMemoryAgentStore(): AgentStore {
  const rows = new Map<string, AgentRecord>();
  const stored = (id: string): AgentRecord | null => {
    const row = rows.get(id);
    return row ? clone(row) : null;
  };
  return {
    async insert(record) {
      if (rows.has(record.id)) return false;
      rows.set(record.id, clone(record));
      return true;
    },
    get: async (id) => stored(id),
    async listByPool(agentPoolId, filter, request) {
      const since = filter.lastPingSince;
      const all = [...rows.values()].filter((a) => a.agentPoolId === agentPoolId && (since === undefined || a.lastPingAt >= since));
      return page(all.sort(byCreation), request);
    },
    async ping(id, at, status) {
      const row = rows.get(id);
      if (row && row.lastPingAt <= at) rows.set(id, { ...row, lastPingAt: at, status });
      return stored(id);
    },
    async setStatus(id, expected, status) {
      const row = rows.get(id);
      if (!row || !expected.includes(row.status)) return null;
      rows.set(id, { ...row, status });
      return stored(id);
    },
    delete: async (id) => rows.delete(id),
    async prune(before, limit) {
      const old = [...rows.values()].filter((a) => a.lastPingAt < before).sort((x, y) => (x.lastPingAt < y.lastPingAt ? -1 : x.lastPingAt > y.lastPingAt ? 1 : x.id < y.id ? -1 : 1));
      for (const a of old.slice(0, limit)) rows.delete(a.id);
      return Math.min(old.length, limit);
    },
  };
}
