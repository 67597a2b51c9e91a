import { defineConfig } from "vitest/config";

/**
 * The multi-host, crash and fault suites: several runplane processes on one PostgreSQL (test/multihost,
 * the cluster and shared demo target examples), crashes, restarts, key and ADMIN_TOKEN rotation across
 * restarts, every route with its storage away, and the SQLite writer thread's conformance run.
 * They take about three minutes of both cores, so they run as `npm run test:multihost`, which CI
 * runs right after `npm test` (which leaves them out to stay within its six minutes).
 */
export const MULTIHOST = [
  "test/multihost/**/*.test.ts",
  "test/delivery/crash.test.ts",
  "test/examples/cluster.test.ts",
  "test/examples/shared-demo-target.test.ts",
  // Keyring rotation across server restarts.
  "test/cli/key-rotation.test.ts",
  // Fault suites: ADMIN_TOKEN rotation across server restarts, every route with its storage away.
  "test/cli/admin-token-rotation.test.ts",
  "test/http/storage-unavailable.test.ts",
  // The whole conformance suite again with SQLite's writer thread (D37): a thread per storage, ~70 s.
  "test/adapters/sqlite-writer-thread.test.ts",
  "test/adapters/sqlite-writer-kill.test.ts",
  // decision D34: agents killed or cut off mid-attempt (child processes, a TCP proxy).
  "test/agent/agent-crash.test.ts",
  // decision D44: the built CLI's agent with its default flags, idle for 90 s on real timers.
  "test/agent/idle-cli.test.ts",
];

export default defineConfig({
  test: {
    include: MULTIHOST,
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
