/**
 * `runplane/testing`: `simulateRunTask`, which plays the platform against a run task
 * integration and reports on the contract. It needs no test runner: the vitest-bound
 * Storage conformance suite is `runplane/testing/vitest`.
 */
export { formatReport, SIMULATED_PLAN, simulateRunTask, type SimulateRunTaskOptions, type SimulationCheck, type SimulationReport } from "./simulate/index.js";
