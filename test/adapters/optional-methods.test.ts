import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import { createSqliteStorage } from "../../adapters/sqlite/index.js";

// The conformance suite skips an optional store method an adapter does not offer (a third party's
// storage may leave one out). runplane's own adapters offer every one, or the features reading them
// (the outbox figures, the agent pools waiting with no agent: D34) go blind on that storage, as the
// SQLite adapter's waitingByPool once did while its conformance case was skipped.
const OPTIONAL_DELIVERY_METHODS = ["stats", "waitingByPool"] as const;

describe("runplane's own storage adapters offer every optional delivery method", () => {
  it.each([
    ["memory", () => createMemoryStorage()],
    ["sqlite", () => createSqliteStorage(new Database(":memory:"))],
  ])("%s", async (_, open) => {
    const storage = open();
    try {
      for (const method of OPTIONAL_DELIVERY_METHODS) expect(typeof storage.taskDeliveries[method], method).toBe("function");
      expect(await storage.taskDeliveries.waitingByPool!(new Date().toISOString(), 10)).toStrictEqual([]);
      // A stage start reads its results' tasks with it in one statement (D57).
      expect(await storage.runTasks.getMany!(["none"])).toStrictEqual([]);
    } finally {
      await storage.close();
    }
  });
});
