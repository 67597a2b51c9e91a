import { defineConfig } from "vitest/config";

/**
 * The shipped-package test (issue 24): builds, packs and installs the tarball in fresh projects, so
 * it takes a minute and a half of both cores. `npm run test:shipped` runs it; CI runs it right
 * after `npm test`, which leaves it out to stay within its five minutes.
 */
export default defineConfig({
  test: {
    include: ["test/packed-tarball.test.ts"],
    environment: "node",
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
