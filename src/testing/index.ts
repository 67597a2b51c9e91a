/**
 * `runplane/testing` (issue 18): the Storage conformance suite for vitest (a custom adapter calls
 * `runStorageConformance(name, setup)` in one test file and is checked by the same cases as the
 * bundled memory, SQLite and PostgreSQL adapters), and `simulateRunTask`, which plays the platform
 * against a run task integration and reports on the contract. vitest is an optional peer
 * dependency that this entry needs; `runplane check-integration` runs the simulator without it.
 */
export { NO_REOPEN, runStorageConformance } from "./conformance/index.js";
export type { ConformanceHandle, ConformanceSetup } from "./conformance/context.js";
export { formatReport, SIMULATED_PLAN, simulateRunTask, type SimulateRunTaskOptions, type SimulationCheck, type SimulationReport } from "./simulate/index.js";
