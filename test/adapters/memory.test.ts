import { createMemoryStorage } from "../../adapters/memory/index.js";
import { runStorageConformance } from "../../src/testing/vitest.js";

// A memory store has nothing to reopen: durability cases read back through the same instance.
runStorageConformance("memory", async () => {
  const storage = createMemoryStorage();
  return { storage, reopen: async () => storage, dispose: () => storage.close() };
});
