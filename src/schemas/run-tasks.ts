import * as z from "zod";

/** Run stages that can trigger tasks (spec 1, 4.1). */
export const RUN_STAGES = ["pre_plan", "post_plan", "pre_apply", "post_apply"] as const;
export const RunStageSchema = z.enum(RUN_STAGES);
export type RunStage = z.infer<typeof RunStageSchema>;

/** Stages that have a plan, so their request carries `plan_json_api_url` (spec 4.1, decision D14). */
export const PLAN_STAGES = ["post_plan", "pre_apply", "post_apply"] as const satisfies readonly RunStage[];

export const STAGE_STATUSES = [
  "pending",
  "running",
  "passed",
  "failed",
  "awaiting_override",
  "errored",
  "canceled",
  "unreachable",
] as const;
export const StageStatusSchema = z.enum(STAGE_STATUSES);
export type StageStatus = z.infer<typeof StageStatusSchema>;

export const RESULT_STATUSES = ["pending", "running", "passed", "failed", "errored", "canceled", "unreachable"] as const;
export const ResultStatusSchema = z.enum(RESULT_STATUSES);
export type ResultStatus = z.infer<typeof ResultStatusSchema>;

export const ENFORCEMENT_LEVELS = ["advisory", "mandatory"] as const;
export const EnforcementLevelSchema = z.enum(ENFORCEMENT_LEVELS);
export type EnforcementLevel = z.infer<typeof EnforcementLevelSchema>;

/** The only statuses an integration may report (spec 4.2, decision D17). */
export const CALLBACK_STATUSES = ["running", "passed", "failed"] as const;
export const CallbackStatusSchema = z.enum(CALLBACK_STATUSES);
export type CallbackStatus = z.infer<typeof CallbackStatusSchema>;

export const TAG_LEVELS = ["none", "info", "warning", "error"] as const;
export const TagLevelSchema = z.enum(TAG_LEVELS);
export type TagLevel = z.infer<typeof TagLevelSchema>;

/** decision D18 */
export const CALLBACK_LIMITS = {
  message: 1000,
  url: 500,
  outcomes: 250,
  outcomeId: 64,
  description: 1000,
  bodyBytes: 1024 * 1024,
  tagKeys: 10,
  tagEntries: 32,
  tagLabel: 32,
} as const;

/** decision D26: what one result holds over all its callbacks; beyond is 422 and nothing is stored. */
export const RESULT_LIMITS = {
  outcomes: 1000,
  bodyBytes: 10 * 1024 * 1024,
} as const;

const encoder = new TextEncoder();
/** The body limit is in bytes, not UTF-16 units; only encode when the length alone cannot decide. */
const withinBytes = (value: string, max: number): boolean =>
  value.length * 3 <= max || (value.length <= max && encoder.encode(value).byteLength <= max);

/** hashicorp/jsonapi skips a `null` attribute, so `null` is read as "not sent". */
const absentable = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? undefined);

export const TagEntrySchema = z.object({
  label: z.string().min(1).max(CALLBACK_LIMITS.tagLabel),
  level: TagLevelSchema.nullish().transform((level): TagLevel => level ?? "none"),
});
export type TagEntry = z.output<typeof TagEntrySchema>;

/**
 * Write form: header name to entries. Key order is kept as JavaScript keeps it, which moves
 * integer-like keys (`"2024"`) first; that is a limitation of JSON objects, not of this code. zod
 * never copies a `__proto__` key into the result, so such a tag is dropped rather than polluting.
 */
export const TagsSchema = z
  .record(z.string().min(1), z.array(TagEntrySchema).min(1).max(CALLBACK_LIMITS.tagEntries))
  .refine((tags) => Object.keys(tags).length <= CALLBACK_LIMITS.tagKeys, {
    message: `at most ${CALLBACK_LIMITS.tagKeys} tag keys are allowed`,
  });
export type Tags = z.output<typeof TagsSchema>;

export const OutcomeAttributesSchema = z.object({
  "outcome-id": z.string().min(1).max(CALLBACK_LIMITS.outcomeId),
  description: z.string().min(1).max(CALLBACK_LIMITS.description),
  body: absentable(
    z.string().refine((body) => withinBytes(body, CALLBACK_LIMITS.bodyBytes), "body must be at most 1 MiB"),
  ),
  url: absentable(z.string().max(CALLBACK_LIMITS.url)),
  tags: absentable(TagsSchema),
});
export type OutcomeAttributes = z.output<typeof OutcomeAttributesSchema>;

export const OutcomeSchema = z.object({
  // go-tfe always sends the type; hand-written integrations often leave it out.
  type: z.literal("task-result-outcomes").optional(),
  attributes: OutcomeAttributesSchema,
});

const OutcomesRelationshipSchema = z.object({
  data: z.array(OutcomeSchema).max(CALLBACK_LIMITS.outcomes),
});

/**
 * PATCH body of the run task callback (spec 4.2, decisions D17, D18). Outcomes are read from
 * `data.relationships.outcomes.data` (go-tfe) and from the legacy top-level `relationships`.
 */
export const CallbackBodySchema = z
  .object({
    data: z.object({
      type: z.literal("task-results"),
      attributes: z.object({
        status: CallbackStatusSchema,
        message: absentable(z.string().max(CALLBACK_LIMITS.message)),
        url: absentable(z.string().max(CALLBACK_LIMITS.url)),
      }),
      relationships: absentable(z.object({ outcomes: absentable(OutcomesRelationshipSchema) })),
    }),
    relationships: absentable(z.object({ outcomes: absentable(OutcomesRelationshipSchema) })),
  })
  .superRefine((body, ctx) => {
    // Both places together still count against the one per-callback limit.
    const nested = body.data.relationships?.outcomes?.data.length ?? 0;
    const legacy = body.relationships?.outcomes?.data.length ?? 0;
    if (nested + legacy > CALLBACK_LIMITS.outcomes) {
      ctx.addIssue({
        code: "custom",
        message: `at most ${CALLBACK_LIMITS.outcomes} outcomes are allowed`,
        path: ["data", "relationships", "outcomes", "data"],
      });
    }
  });
export type CallbackBody = z.output<typeof CallbackBodySchema>;

export interface OutcomeInput {
  outcomeId: string;
  description: string;
  body: string | undefined;
  url: string | undefined;
  tags: Tags;
}

export interface CallbackInput {
  status: CallbackStatus;
  message: string | undefined;
  url: string | undefined;
  /** Nested outcomes first, then legacy top-level ones; empty when none were sent. */
  outcomes: OutcomeInput[];
}

/** The callback flattened for the service: one outcome list, camel-case names. */
export const CallbackSchema = CallbackBodySchema.transform((body): CallbackInput => {
  const sent = [...(body.data.relationships?.outcomes?.data ?? []), ...(body.relationships?.outcomes?.data ?? [])];
  return {
    status: body.data.attributes.status,
    message: body.data.attributes.message,
    url: body.data.attributes.url,
    outcomes: sent.map(({ attributes: a }) => ({
      outcomeId: a["outcome-id"],
      description: a.description,
      body: a.body,
      url: a.url,
      tags: a.tags ?? {},
    })),
  };
});

/**
 * The run task request payload (spec 4.1, decision D14). The integration kit parses incoming
 * requests with it; unknown keys (newer HCP Terraform fields) are stripped, not rejected.
 */
export const RunTaskRequestSchema = z
  .object({
    payload_version: z.literal(1),
    stage: RunStageSchema,
    access_token: z.string().min(1),
    capabilities: z.object({ outcomes: z.boolean() }),
    configuration_version_download_url: z.url().nullable(),
    configuration_version_id: z.string().min(1),
    is_speculative: z.boolean(),
    organization_name: z.string().min(1),
    plan_json_api_url: z.url().optional(),
    run_app_url: z.url(),
    run_created_at: z.iso.datetime({ offset: true }),
    run_created_by: z.string(),
    run_id: z.string().min(1),
    run_message: z.string(),
    task_result_callback_url: z.url(),
    task_result_enforcement_level: EnforcementLevelSchema,
    task_result_id: z.string().min(1),
    vcs_branch: z.string().nullable(),
    vcs_commit_url: z.string().nullable(),
    // Sent by HCP Terraform since 2025; older senders leave it out.
    vcs_commit_hash: z.string().nullable().optional(),
    vcs_pull_request_url: z.string().nullable(),
    vcs_repo_url: z.string().nullable(),
    workspace_app_url: z.url(),
    workspace_id: z.string().min(1),
    workspace_name: z.string().min(1),
    workspace_working_directory: z.string(),
  })
  .superRefine((payload, ctx) => {
    // pre_plan runs before any plan exists, so a plan URL there is a malformed request.
    if (payload.stage === "pre_plan" && payload.plan_json_api_url !== undefined) {
      ctx.addIssue({ code: "custom", message: "plan_json_api_url is not sent for pre_plan", path: ["plan_json_api_url"] });
    }
  });
export type RunTaskRequest = z.output<typeof RunTaskRequestSchema>;
