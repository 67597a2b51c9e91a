import {
  BOOLEAN_LEVELS,
  PROJECT_SETTINGS_LEVELS,
  PROJECT_TEAMS_LEVELS,
  RUNS_LEVELS,
  SENTINEL_MOCKS_LEVELS,
  STATE_VERSIONS_LEVELS,
  VARIABLE_SETS_LEVELS,
  VARIABLES_LEVELS,
  type AccessLevel,
  type PartialPermissionSet,
  type PermissionSet,
  type ProjectAccess,
  type WorkspaceAccess,
} from "../schemas/team-projects.js";

/**
 * The implied-permission table of spec 4.6 as data; the `custom` row holds the custom defaults.
 * `variableSets` and `policyOverrides` are not in the spec table: write/true for admin only, none/false
 * everywhere else (decision D20). `runTasks: true` for maintain is normative (decision D20).
 */
export const IMPLIED_PERMISSIONS = {
  read: {
    projectAccess: { settings: "read", teams: "none", variableSets: "none" },
    workspaceAccess: {
      runs: "read", sentinelMocks: "none", stateVersions: "read", variables: "read",
      create: false, locking: false, delete: false, move: false, runTasks: false, policyOverrides: false,
    },
  },
  write: {
    projectAccess: { settings: "read", teams: "none", variableSets: "none" },
    workspaceAccess: {
      runs: "apply", sentinelMocks: "read", stateVersions: "write", variables: "write",
      create: false, locking: true, delete: false, move: false, runTasks: false, policyOverrides: false,
    },
  },
  maintain: {
    projectAccess: { settings: "read", teams: "none", variableSets: "none" },
    workspaceAccess: {
      runs: "apply", sentinelMocks: "read", stateVersions: "write", variables: "write",
      create: true, locking: true, delete: true, move: false, runTasks: true, policyOverrides: false,
    },
  },
  admin: {
    projectAccess: { settings: "delete", teams: "manage", variableSets: "write" },
    workspaceAccess: {
      runs: "apply", sentinelMocks: "read", stateVersions: "write", variables: "write",
      create: true, locking: true, delete: true, move: true, runTasks: true, policyOverrides: true,
    },
  },
  custom: {
    projectAccess: { settings: "read", teams: "none", variableSets: "none" },
    workspaceAccess: {
      runs: "read", sentinelMocks: "none", stateVersions: "none", variables: "none",
      create: false, locking: false, delete: false, move: false, runTasks: false, policyOverrides: false,
    },
  },
} as const satisfies Record<AccessLevel, PermissionSet>;

/** Lowest to highest, per permission: what "the maximum wins" (decision D19) compares. */
export const PROJECT_ACCESS_ORDERS = {
  settings: PROJECT_SETTINGS_LEVELS,
  teams: PROJECT_TEAMS_LEVELS,
  variableSets: VARIABLE_SETS_LEVELS,
} as const satisfies { [K in keyof ProjectAccess]: readonly ProjectAccess[K][] };

export const WORKSPACE_ACCESS_ORDERS = {
  runs: RUNS_LEVELS,
  sentinelMocks: SENTINEL_MOCKS_LEVELS,
  stateVersions: STATE_VERSIONS_LEVELS,
  variables: VARIABLES_LEVELS,
  create: BOOLEAN_LEVELS,
  locking: BOOLEAN_LEVELS,
  delete: BOOLEAN_LEVELS,
  move: BOOLEAN_LEVELS,
  runTasks: BOOLEAN_LEVELS,
  policyOverrides: BOOLEAN_LEVELS,
} as const satisfies { [K in keyof WorkspaceAccess]: readonly WorkspaceAccess[K][] };

export const PROJECT_ACCESS_KEYS = Object.keys(PROJECT_ACCESS_ORDERS) as (keyof ProjectAccess)[];
export const WORKSPACE_ACCESS_KEYS = Object.keys(WORKSPACE_ACCESS_ORDERS) as (keyof WorkspaceAccess)[];

/** Rank of `value` in `order`; the arrays are tiny, so a scan is cheaper than building maps. */
export const rank = <V>(order: readonly V[], value: V): number => order.indexOf(value);

// Fresh copies: callers store and spread these, and the table itself must never be mutated.
const copy = (set: PermissionSet): PermissionSet => ({
  projectAccess: { ...set.projectAccess },
  workspaceAccess: { ...set.workspaceAccess },
});

/** What a level grants. For `custom` this is the custom defaults (spec 4.6). */
export const impliedPermissions = (access: AccessLevel): PermissionSet => copy(IMPLIED_PERMISSIONS[access]);

/**
 * A custom permission set: the given permissions over `base`. `base` defaults to the custom
 * defaults (a switch to custom starts from them); pass the stored set for a custom-to-custom PATCH,
 * which keeps what it does not name (decision D20).
 */
export const customPermissions = (
  partial: PartialPermissionSet,
  base: PermissionSet = IMPLIED_PERMISSIONS.custom,
): PermissionSet => ({
  projectAccess: { ...base.projectAccess, ...definedOnly(partial.projectAccess) },
  workspaceAccess: { ...base.workspaceAccess, ...definedOnly(partial.workspaceAccess) },
});

// `{ runs: undefined }` must not erase a default: spreading it as-is would.
function definedOnly<T extends object>(value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
