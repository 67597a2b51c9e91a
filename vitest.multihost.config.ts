import { defineConfig } from "vitest/config";

/**
 * The multi-host suites (test/multihost): several runplane processes on one PostgreSQL, crashes,
 * restarts and key rotation across hosts. They take about two minutes of both cores, so they run
 * as `npm run test:multihost`, which CI runs right after `npm test` (which leaves them out to stay
 * within its six minutes).
 */
export default defineConfig({
  test: {
    include: ["test/multihost/**/*.test.ts"],
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
