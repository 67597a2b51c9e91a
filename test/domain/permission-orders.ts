// Hand-written orders of every team-project permission (lowest first), per spec 4.6 and D20. Shared
// by the exhaustive and property tests as their independent reference: it borrows nothing from the
// resolver's own tables.
export const ORDERS: Record<string, readonly unknown[]> = {
  settings: ["read", "update", "delete"],
  teams: ["none", "read", "manage"],
  variableSets: ["none", "read", "write"],
  runs: ["read", "plan", "apply"],
  sentinelMocks: ["none", "read"],
  stateVersions: ["none", "read-outputs", "read", "write"],
  variables: ["none", "read", "write"],
  create: [false, true],
  locking: [false, true],
  delete: [false, true],
  move: [false, true],
  runTasks: [false, true],
  policyOverrides: [false, true],
};
