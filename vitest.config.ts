import { defineConfig } from "vitest/config";
import { MULTIHOST } from "./vitest.multihost.config.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    // The shipped-package test and the multi-host suites run on their own, in CI after npm test:
    // `npm run test:shipped` (vitest.shipped.config.ts) and `npm run test:multihost` (vitest.multihost.config.ts).
    exclude: ["**/node_modules/**", "test/packed-tarball.test.ts", ...MULTIHOST],
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two cores: forks keep better-sqlite3 native handles isolated per file.
    pool: "forks",
    // vitest runs cores - 1 files at once, one here; most slow files wait on child processes,
    // sockets or PostgreSQL, so two at a time keep both cores busy (issue 24 doubled the suite).
    maxWorkers: 2,
  },
});
