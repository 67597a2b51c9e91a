export { formatReport, SIMULATED_PLAN, simulateRunTask, type SimulateRunTaskOptions, type SimulationCheck, type SimulationReport } from "./simulate.js";
