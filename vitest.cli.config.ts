import { defineConfig } from "vitest/config";

/**
 * The command-line suites: each test spawns `runplane` through tsx (1.5-2.5 s a process) or serves
 * with it, about four minutes of both cores' test time in all. They run as `npm run test:cli`, which
 * CI runs right after `npm test` (which leaves them out to stay within its six minutes). The
 * argument parser's unit tests (`test/cli/args.test.ts`) stay in `npm test`; the rotation suites
 * across restarts are in `npm run test:multihost`.
 */
export const CLI = [
  "test/cli/audit-verify.test.ts",
  "test/cli/check-integration.test.ts",
  "test/cli/commands.test.ts",
  "test/cli/data-commands.test.ts",
  "test/cli/doctor-hosts.test.ts",
  "test/cli/doctor.test.ts",
  "test/cli/migrate.test.ts",
  "test/cli/read-only-data-dir.test.ts",
  "test/cli/reencrypt-retire.test.ts",
  "test/cli/serve.test.ts",
  "test/cli/token-lifecycle.test.ts",
];

export default defineConfig({
  test: {
    include: CLI,
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
