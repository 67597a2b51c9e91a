import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    // The shipped-package test runs on its own: `npm run test:shipped` (vitest.shipped.config.ts), in CI after npm test.
    exclude: ["**/node_modules/**", "test/packed-tarball.test.ts"],
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
