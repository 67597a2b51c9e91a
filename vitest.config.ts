import { defineConfig } from "vitest/config";
import { CLI } from "./vitest.cli.config.js";
import { MULTIHOST } from "./vitest.multihost.config.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    // The shipped-package test, the multi-host suites and the command-line suites run on their own,
    // in CI after npm test: `npm run test:shipped` (vitest.shipped.config.ts), `npm run
    // test:multihost` (vitest.multihost.config.ts) and `npm run test:cli` (vitest.cli.config.ts).
    exclude: ["**/node_modules/**", "test/packed-tarball.test.ts", ...MULTIHOST, ...CLI],
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
