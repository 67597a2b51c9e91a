import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryStorage } from "../../adapters/memory/index.js";
import type { Storage } from "../../src/storage/types.js";
import { NO_REOPEN, runStorageConformance } from "../../src/testing/vitest.js";

// A custom adapter as a host writes one: it wraps the memory store, has no reopen and no dispose.
let calls = 0;
function countingStorage(): Storage {
  const inner = createMemoryStorage();
  return new Proxy(inner, {
    get(target, key, receiver) {
      calls++;
      return Reflect.get(target, key, receiver);
    },
  });
}

runStorageConformance("custom (memory wrapper, no reopen)", async () => ({ storage: countingStorage() }));

type Task = { name: string; type: string; mode?: string; result?: { state?: string; note?: string }; tasks?: Task[] };
const leaves = (task: Task): Task[] => (task.tasks ? task.tasks.flatMap(leaves) : [task]);

// vitest 4 passes the finished file only as the second argument of a file-level afterAll.
afterAll(({}, file) => {
  // The suite really drove the custom store, and only durability cases skipped, each saying why.
  expect(calls).toBeGreaterThan(100);
  const cases = leaves(file as unknown as Task).filter((t) => t.type === "test");
  const skipped = cases.filter((t) => t.result?.state === "skip");
  expect(skipped.length).toBeGreaterThan(5);
  for (const t of skipped) {
    expect(t.result?.note).toBe(NO_REOPEN);
    expect(t.name).toMatch(/reopen|survive|durably/);
  }
  expect(cases.filter((t) => t.result?.state === "pass").length).toBeGreaterThan(50);
});

describe("runplane/testing/vitest", () => {
  it("is what the bundled adapters' conformance tests import", () => {
    for (const name of ["memory", "sqlite", "postgres"]) {
      const source = readFileSync(new URL(`../adapters/${name}.test.ts`, import.meta.url), "utf8");
      expect(source).toContain('import { runStorageConformance } from "../../src/testing/vitest.js";');
      expect(source).toMatch(/runStorageConformance\(/);
    }
  });
});
