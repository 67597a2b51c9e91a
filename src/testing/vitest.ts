/**
 * `runplane/testing/vitest`: the Storage conformance suite for vitest. A custom
 * adapter calls `runStorageConformance(name, setup)` in one test file and is checked by the same
 * cases as the bundled memory, SQLite and PostgreSQL adapters. vitest is an optional peer
 * dependency that only this entry needs.
 */
export { NO_REOPEN, runStorageConformance } from "./conformance/index.js";
export type { ConformanceHandle, ConformanceSetup } from "./conformance/context.js";
