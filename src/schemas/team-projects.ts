import * as z from "zod";

/**
 * The team-project access model (spec 2.6, 4.6; decisions D19, D20). Every level array is ordered
 * lowest to highest: the permission resolver ranks values by their index, so the order here is the
 * order "additive" means (decision D19).
 */
export const ACCESS_LEVELS = ["read", "write", "maintain", "admin", "custom"] as const;
export const AccessLevelSchema = z.enum(ACCESS_LEVELS);
export type AccessLevel = z.infer<typeof AccessLevelSchema>;

export const PROJECT_SETTINGS_LEVELS = ["read", "update", "delete"] as const;
export const PROJECT_TEAMS_LEVELS = ["none", "read", "manage"] as const;
/** Not in the spec; accepted because real clients send it (decision D20). */
export const VARIABLE_SETS_LEVELS = ["none", "read", "write"] as const;

export const RUNS_LEVELS = ["read", "plan", "apply"] as const;
export const SENTINEL_MOCKS_LEVELS = ["none", "read"] as const;
export const STATE_VERSIONS_LEVELS = ["none", "read-outputs", "read", "write"] as const;
export const VARIABLES_LEVELS = ["none", "read", "write"] as const;
/** Booleans rank like the levels: granting (`true`) is above not granting. */
export const BOOLEAN_LEVELS = [false, true] as const;

export const ProjectAccessSchema = z.object({
  settings: z.enum(PROJECT_SETTINGS_LEVELS),
  teams: z.enum(PROJECT_TEAMS_LEVELS),
  variableSets: z.enum(VARIABLE_SETS_LEVELS),
});
export type ProjectAccess = z.infer<typeof ProjectAccessSchema>;

export const WorkspaceAccessSchema = z.object({
  runs: z.enum(RUNS_LEVELS),
  sentinelMocks: z.enum(SENTINEL_MOCKS_LEVELS),
  stateVersions: z.enum(STATE_VERSIONS_LEVELS),
  variables: z.enum(VARIABLES_LEVELS),
  create: z.boolean(),
  locking: z.boolean(),
  delete: z.boolean(),
  move: z.boolean(),
  runTasks: z.boolean(),
  /** Not in the spec; accepted because real clients send it (decision D20). */
  policyOverrides: z.boolean(),
});
export type WorkspaceAccess = z.infer<typeof WorkspaceAccessSchema>;

/** The full permission set of one grant (or one source of access). */
export const PermissionSetSchema = z.object({
  projectAccess: ProjectAccessSchema,
  workspaceAccess: WorkspaceAccessSchema,
});
export type PermissionSet = z.infer<typeof PermissionSetSchema>;

/** The `custom` request pieces, before defaults are filled in. */
export interface PartialPermissionSet {
  projectAccess?: Partial<ProjectAccess> | undefined;
  workspaceAccess?: Partial<WorkspaceAccess> | undefined;
}

/**
 * A stored grant. For a non-custom `access` the permission fields hold that level's implied values,
 * so a read never has to recompute them and a later switch to `custom` has a concrete starting point.
 */
export interface TeamProjectRecord {
  id: string;
  teamId: string;
  projectId: string;
  organization: string;
  access: AccessLevel;
  projectAccess: ProjectAccess;
  workspaceAccess: WorkspaceAccess;
  createdAt: string;
  updatedAt: string;
}

/** Internal key to wire key; the wire keys are the `source.pointer` segments of 422s. */
export const PROJECT_ACCESS_WIRE_KEYS = {
  settings: "settings",
  teams: "teams",
  variableSets: "variable-sets",
} as const satisfies Record<keyof ProjectAccess, string>;

export const WORKSPACE_ACCESS_WIRE_KEYS = {
  runs: "runs",
  sentinelMocks: "sentinel-mocks",
  stateVersions: "state-versions",
  variables: "variables",
  create: "create",
  locking: "locking",
  delete: "delete",
  move: "move",
  runTasks: "run-tasks",
  policyOverrides: "policy-overrides",
} as const satisfies Record<keyof WorkspaceAccess, string>;

// Strict so a misspelt permission ("run_tasks") is a 422, not a silently ignored key.
export const ProjectAccessInputSchema = z
  .object({
    settings: z.enum(PROJECT_SETTINGS_LEVELS).optional(),
    teams: z.enum(PROJECT_TEAMS_LEVELS).optional(),
    "variable-sets": z.enum(VARIABLE_SETS_LEVELS).optional(),
  })
  .strict();
export type ProjectAccessInput = z.infer<typeof ProjectAccessInputSchema>;

export const WorkspaceAccessInputSchema = z
  .object({
    runs: z.enum(RUNS_LEVELS).optional(),
    "sentinel-mocks": z.enum(SENTINEL_MOCKS_LEVELS).optional(),
    "state-versions": z.enum(STATE_VERSIONS_LEVELS).optional(),
    variables: z.enum(VARIABLES_LEVELS).optional(),
    create: z.boolean().optional(),
    locking: z.boolean().optional(),
    delete: z.boolean().optional(),
    move: z.boolean().optional(),
    "run-tasks": z.boolean().optional(),
    "policy-overrides": z.boolean().optional(),
  })
  .strict();
export type WorkspaceAccessInput = z.infer<typeof WorkspaceAccessInputSchema>;

// The attributes object itself is not strict: like the real API it ignores read-only or unknown
// attributes a client echoes back; only the permission objects are checked key by key.
export const TeamProjectCreateAttributesSchema = z.object({
  access: AccessLevelSchema,
  "project-access": ProjectAccessInputSchema.optional(),
  "workspace-access": WorkspaceAccessInputSchema.optional(),
});
export type TeamProjectCreateAttributes = z.infer<typeof TeamProjectCreateAttributesSchema>;

export const TeamProjectUpdateAttributesSchema = TeamProjectCreateAttributesSchema.partial();
export type TeamProjectUpdateAttributes = z.infer<typeof TeamProjectUpdateAttributesSchema>;

function renameKeys<From extends string, To extends string>(
  source: Partial<Record<From, unknown>>,
  names: Record<From, To>,
): Partial<Record<To, unknown>> {
  const out: Partial<Record<To, unknown>> = {};
  for (const [from, to] of Object.entries(names) as [From, To][]) {
    if (source[from] !== undefined) out[to] = source[from];
  }
  return out;
}

const invert = <K extends string, V extends string>(map: Record<K, V>): Record<V, K> =>
  Object.fromEntries(Object.entries(map).map(([k, v]) => [v, k])) as Record<V, K>;
const PROJECT_ACCESS_INTERNAL_KEYS = invert(PROJECT_ACCESS_WIRE_KEYS);
const WORKSPACE_ACCESS_INTERNAL_KEYS = invert(WORKSPACE_ACCESS_WIRE_KEYS);

export const fromProjectAccessInput = (input: ProjectAccessInput): Partial<ProjectAccess> =>
  renameKeys(input, PROJECT_ACCESS_INTERNAL_KEYS) as Partial<ProjectAccess>;

export const fromWorkspaceAccessInput = (input: WorkspaceAccessInput): Partial<WorkspaceAccess> =>
  renameKeys(input, WORKSPACE_ACCESS_INTERNAL_KEYS) as Partial<WorkspaceAccess>;

/** Wire form of a full permission object (every key filled in, as responses show them). */
export const toProjectAccessWire = (access: ProjectAccess): Required<ProjectAccessInput> =>
  renameKeys(access, PROJECT_ACCESS_WIRE_KEYS) as Required<ProjectAccessInput>;

export const toWorkspaceAccessWire = (access: WorkspaceAccess): Required<WorkspaceAccessInput> =>
  renameKeys(access, WORKSPACE_ACCESS_WIRE_KEYS) as Required<WorkspaceAccessInput>;
