import * as z from "zod";
import type { Dialect } from "./common.js";
import { RUN_TASK_CATEGORIES } from "./run-task-records.js";
import { EnforcementLevelSchema, ResultStatusSchema, RunStageSchema, StageStatusSchema, TagLevelSchema } from "./run-tasks.js";
import { AgentStatusSchema } from "./agents.js";
import { AccessLevelSchema, ProjectAccessInputSchema, WorkspaceAccessInputSchema } from "./team-projects.js";
import { CATEGORY_WORDS } from "./variables.js";

/**
 * The attributes every response resource carries, as zod schemas: the JSON:API writer writes exactly
 * these keys (camelCase here, kebab-case on the wire) and the OpenAPI document describes them from
 * the same objects, so the two cannot drift apart. Members the writer passes verbatim
 * (maps, permission objects) are described with their wire keys.
 */

const Timestamp = z.iso.datetime({ offset: true }).describe("RFC 3339 timestamp");
/** `<status>-at` keys (D9), each a timestamp. */
const StatusTimestamps = z.record(z.string(), Timestamp).describe("when each status was reached, keyed `<status>-at`");

export const workspaceVariableAttributes = (dialect: Dialect) =>
  z.object({
    key: z.string(),
    value: z.string().nullable().describe("null when sensitive (D10)"),
    sensitive: z.boolean(),
    category: z.enum(CATEGORY_WORDS[dialect]),
    hcl: z.boolean(),
    createdAt: Timestamp,
    description: z.string().nullable(),
    versionId: z.string(),
  });

export const PolicySetParameterAttributes = z.object({
  key: z.string(),
  value: z.string().nullable().describe("null when sensitive (D10)"),
  sensitive: z.boolean(),
  category: z.literal("policy-set"),
});

export const TeamProjectAttributes = z.object({
  access: AccessLevelSchema,
  projectAccess: ProjectAccessInputSchema.required(),
  workspaceAccess: WorkspaceAccessInputSchema.required(),
});

export const AgentTokenAttributes = z.object({
  description: z.string(),
  createdAt: Timestamp,
  lastUsedAt: Timestamp.nullable(),
  token: z.string().nullable().describe("the secret, in the create response only; null everywhere else"),
  expiredAt: Timestamp.nullable().describe("when a results page session ends; null for agent and API tokens, which do not expire"),
});

/** decision D34: an agent of a pool, as HCP Terraform and go-tfe's `Agent` have it. */
export const AgentAttributes = z.object({
  name: z.string().nullable().describe("null when the agent gave no name"),
  status: AgentStatusSchema,
  ipAddress: z.string(),
  lastPingAt: Timestamp,
});

export const TaskAttributes = z.object({
  name: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  category: z.enum(RUN_TASK_CATEGORIES),
  enabled: z.boolean(),
  hmacKey: z.null().describe("write-only: always null in responses (D11)"),
  globalConfiguration: z.strictObject({
    enabled: z.boolean(),
    stages: z.array(RunStageSchema),
    "enforcement-level": EnforcementLevelSchema,
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const WorkspaceTaskAttributes = z.object({
  enforcementLevel: EnforcementLevelSchema,
  stage: RunStageSchema.describe("deprecated: the first of `stages`"),
  stages: z.array(RunStageSchema),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const TaskStageAttributes = z.object({
  status: StageStatusSchema,
  stage: RunStageSchema,
  statusTimestamps: StatusTimestamps,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  permissions: z.strictObject({
    "can-override-policy": z.boolean(),
    "can-override-tasks": z.boolean(),
    "can-override": z.boolean(),
  }),
  actions: z.strictObject({ "is-overridable": z.boolean() }),
});

export const TaskResultAttributes = z.object({
  status: ResultStatusSchema,
  message: z.string().nullable(),
  url: z.string().nullable(),
  statusTimestamps: StatusTimestamps,
  taskId: z.string(),
  taskName: z.string(),
  taskUrl: z.string(),
  stage: RunStageSchema,
  isSpeculative: z.boolean(),
  workspaceTaskId: z.string(),
  workspaceTaskEnforcementLevel: EnforcementLevelSchema,
  taskResultOutcomesCount: z.number().int().min(0),
  agentPoolId: z.string().nullable().describe("the task's agent pool when its stage started (D34); null for a task the platform delivers itself"),
  agentPoolName: z.string().nullable().describe("that pool's name (D34); null for a direct task or a pool since deleted"),
  agentId: z.string().nullable().describe("the agent that carried the newest attempt (D34); null while none has"),
  agentName: z.string().nullable().describe("that agent's name, its `--name` (D34)"),
  agentConnected: z.boolean().nullable().describe("whether an agent of the pool is connected to any host now (D34); null for a direct task"),
  agentLastSeenAt: z.string().nullable().describe("the newest report of any agent of the pool (D34): since then none has been connected, when `agent-connected` is false"),
  waitingForAgent: z.string().nullable().describe("while the result is pending and no agent of its pool is connected: that it waits for one, and since when (D34)"),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** Tags in read form (D18): one entry per tag key, its values with a level each. */
const ReadTags = z.array(
  z.strictObject({ label: z.string(), value: z.array(z.strictObject({ label: z.string(), level: TagLevelSchema })) }),
);

export const OutcomeAttributes = z.object({
  outcomeId: z.string(),
  description: z.string(),
  url: z.string().nullable(),
  tags: ReadTags,
  createdAt: Timestamp,
});

/** `workspaces` appear only as included resources of a task stage, a task or a run. */
export const IncludedWorkspaceAttributes = z.object({ name: z.string(), workingDirectory: z.string() });
