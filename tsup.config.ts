import { defineConfig } from "tsup";

/** Build entries, named after the package.json `exports` subpaths (a test keeps the two in step). */
export const entries = {
  index: "src/index.ts",
  node: "src/node.ts",
  express: "src/express.ts",
  storage: "src/storage/index.ts",
  integration: "src/integration/index.ts",
  agent: "src/agent/index.ts",
  "adapters/memory": "adapters/memory/index.ts",
  "adapters/sqlite": "adapters/sqlite/index.ts",
  "adapters/postgres": "adapters/postgres/index.ts",
  testing: "src/testing/index.ts",
  "testing/vitest": "src/testing/vitest.ts",
} as const;

/** Executables, named after the package.json `bin` targets (not exports; the same test checks them). */
export const binEntries = {
  cli: "src/cli/main.ts",
} as const;

/**
 * Worker threads, started by a file URL, not imported (not exports): the SQLite writer thread
 * (decision D37), which `adapters/sqlite/writer-client.ts` finds at `dist/adapters/sqlite-writer.js`.
 */
export const workerEntries = {
  "adapters/sqlite-writer": "adapters/sqlite/writer-thread.ts",
} as const;

export default defineConfig({
  entry: { ...entries, ...binEntries, ...workerEntries },
  format: ["esm"],
  target: "node20",
  dts: true,
  clean: true,
  // decision D51: maps for stack traces (file and line of runplane's TypeScript, with
  // --enable-source-maps), without the sources themselves (`sourcesContent`), which were two thirds
  // of the unpacked package and which no embedder's runtime reads.
  sourcemap: true,
  esbuildOptions(options) {
    options.sourcesContent = false;
  },
  splitting: true,
  treeshake: true,
  external: ["better-sqlite3", "pg", "vitest"],
});
