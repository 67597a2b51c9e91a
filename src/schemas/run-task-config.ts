import * as z from "zod";
import { RUN_TASK_CATEGORIES, type GlobalConfiguration } from "./run-task-records.js";
import { EnforcementLevelSchema, RUN_STAGES, RunStageSchema, type RunStage } from "./run-tasks.js";

/**
 * Input of run task configuration (type `tasks` and `workspace-tasks`), keyed by wire attribute
 * names so validation errors point at `/data/attributes/<wire-name>` (habit 7). The programmatic API
 * takes the same attribute objects.
 */
export const RUN_TASK_LIMITS = { name: 128, url: 2048, description: 512, hmacKey: 4096 } as const;

/** An absolute `http:`/`https:` URL. The SSRF check of the address arrives with delivery (D15). */
export const TaskUrlSchema = z
  .string()
  .max(RUN_TASK_LIMITS.url)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
    } catch {
      return false;
    }
  }, "must be an absolute http or https URL");

const NameSchema = z.string().trim().min(1).max(RUN_TASK_LIMITS.name);
const DescriptionSchema = z.string().max(RUN_TASK_LIMITS.description).nullable();
/** An empty key is no key (it would authenticate nothing, D14); `null` removes the key. */
const HmacKeySchema = z
  .string()
  .max(RUN_TASK_LIMITS.hmacKey)
  .nullable()
  .transform((key) => (key === "" ? null : key));

/** Distinct stages, returned in run order. */
const distinctStages = (list: z.ZodArray<typeof RunStageSchema>) =>
  list
    .refine((stages) => new Set(stages).size === stages.length, "must not repeat a stage")
    .transform((stages): RunStage[] => RUN_STAGES.filter((s) => stages.includes(s)));

/** A global configuration may hold no stage while it is disabled. */
const StagesListSchema = distinctStages(z.array(RunStageSchema));

/** Wire `global-configuration`: every member optional; on update the sent ones replace the stored ones. */
export const GlobalConfigurationSchema = z.object({
  enabled: z.boolean().optional(),
  stages: StagesListSchema.optional(),
  "enforcement-level": EnforcementLevelSchema.optional(),
});
export type GlobalConfigurationInput = z.input<typeof GlobalConfigurationSchema>;

export const TaskCreateSchema = z.object({
  name: NameSchema,
  url: TaskUrlSchema,
  description: DescriptionSchema.optional().transform((d) => d ?? null),
  category: z.enum(RUN_TASK_CATEGORIES).optional().default("task"),
  enabled: z.boolean().optional().default(true),
  "hmac-key": HmacKeySchema.optional().transform((k) => k ?? null),
  "global-configuration": GlobalConfigurationSchema.optional(),
});
export type TaskCreate = z.input<typeof TaskCreateSchema>;

export const TaskUpdateSchema = z.object({
  name: NameSchema.optional(),
  url: TaskUrlSchema.optional(),
  description: DescriptionSchema.optional(),
  category: z.enum(RUN_TASK_CATEGORIES).optional(),
  enabled: z.boolean().optional(),
  "hmac-key": HmacKeySchema.optional(),
  "global-configuration": GlobalConfigurationSchema.optional(),
});
export type TaskUpdate = z.input<typeof TaskUpdateSchema>;

const StagesSchema = distinctStages(z.array(RunStageSchema).min(1));

export const WorkspaceTaskCreateSchema = z.object({
  "enforcement-level": EnforcementLevelSchema,
  stages: StagesSchema.optional(),
  /** Deprecated single stage (older clients); `stages` wins when both are sent. */
  stage: RunStageSchema.optional(),
});
export type WorkspaceTaskCreate = z.input<typeof WorkspaceTaskCreateSchema>;

export const WorkspaceTaskUpdateSchema = z.object({
  "enforcement-level": EnforcementLevelSchema.optional(),
  stages: StagesSchema.optional(),
  stage: RunStageSchema.optional(),
});
export type WorkspaceTaskUpdate = z.input<typeof WorkspaceTaskUpdateSchema>;

/** Views: what the API shows. `hmacKey` is never part of one (it is write-only, D11). */
export interface TaskView {
  id: string;
  organization: string;
  name: string;
  url: string;
  description: string | null;
  category: "task";
  enabled: boolean;
  /** Whether a key is set; the key itself never leaves the core. */
  hasHmacKey: boolean;
  globalConfiguration: GlobalConfiguration;
  /** decision D34: the agent pool whose agents carry the task's requests, or null. */
  agentPoolId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WorkspaceTaskView {
  id: string;
  workspaceId: string;
  organization: string;
  taskId: string;
  enforcementLevel: "advisory" | "mandatory";
  stages: RunStage[];
  createdAt: string;
  updatedAt: string;
}

const VcsSchema = z.object({
  branch: z.string().nullable().default(null),
  repoUrl: z.string().nullable().default(null),
  commitUrl: z.string().nullable().default(null),
  /** The commit SHA, sent as `vcs_commit_hash`. */
  commitHash: z.string().nullable().default(null),
  pullRequestUrl: z.string().nullable().default(null),
});

/** `runTasks.createRun(input)`: the host's run, as the run task request needs it (spec 4.1). */
export const CreateRunSchema = z.object({
  /** The host's run id; generated (`run-`) when omitted. Creating the same id again is a no-op. */
  id: z.string().min(1).optional(),
  workspaceId: z.string().min(1),
  message: z.string().default(""),
  createdBy: z.string().default(""),
  isSpeculative: z.boolean().default(false),
  configurationVersionId: z.string().min(1),
  configurationVersionDownloadable: z.boolean().default(true),
  /** The run's plan id (`plan_json_api_url`); generated (`plan-`) when omitted. */
  planId: z.string().min(1).optional(),
  /** The run's apply id (`GET /applies/:id`); generated (`apply-`) when omitted. */
  applyId: z.string().min(1).optional(),
  /** VCS data; omitted or null without a repository (the workspace's repository and branch fill gaps). */
  vcs: VcsSchema.nullable().optional(),
});
export type CreateRunInput = z.input<typeof CreateRunSchema>;
