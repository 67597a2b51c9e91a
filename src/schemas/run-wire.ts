import * as z from "zod";

/**
 * The read side of a run that integrations call (D24): runs, plans, applies, run events,
 * comments and policy checks, as the JSON:API writer writes them and the OpenAPI document describes
 * them (see `./wire.ts`). Attribute sets follow go-tfe's structs (`run.go` Run, `plan.go` Plan,
 * `apply.go` Apply, `run_event.go` RunEvent, `comment.go` Comment, `policy_check.go` PolicyCheck;
 * hashicorp/go-tfe) and the HCP Terraform API pages "Runs", "Plans", "Applies", "Comments" and
 * "Policy Checks". What only the host knows is optional: the default dialect leaves out what the
 * host did not provide, the hcp-terraform dialect writes its Go zero value (decision D1).
 */

/** go-tfe tags `created-at` `iso8601`: UTC with a literal `Z` (D9). */
const UtcTimestamp = z.iso.datetime().describe("UTC ISO-8601 with a `Z`");
const Rfc3339 = z.iso.datetime({ offset: true }).describe("RFC 3339 timestamp");
const StatusTimestamps = z.record(z.string(), Rfc3339).describe("when each status was reached, keyed `<status>-at` (D9)");
const count = z.number().int().min(0);
const hostOnly = <T extends z.ZodType>(schema: T, what: string) => schema.optional().describe(`${what}; from the host (option \`runs\`), left out in the default dialect when it gives none`);

/** Present in the hcp-terraform dialect only, as go-tfe's zero value: runplane neither queues nor applies runs. */
const hcpOnly = <T extends z.ZodType>(schema: T) => schema.optional().describe("hcp-terraform dialect only: the Go zero value");

export const RunAttributes = z.object({
  message: z.string(),
  createdAt: UtcTimestamp,
  isSpeculative: z.boolean().describe("runplane: the run is speculative (plan only)"),
  planOnly: z.boolean(),
  status: hostOnly(z.string(), "the run's status (`planning`, `applied`, ...)"),
  statusTimestamps: hostOnly(StatusTimestamps, "when the run reached each status"),
  hasChanges: hostOnly(z.boolean(), "whether the plan changes anything"),
  isDestroy: hostOnly(z.boolean(), "a destroy run"),
  autoApply: hostOnly(z.boolean(), "applied without confirmation"),
  source: hostOnly(z.string(), "what started the run (`tfe-api`, ...)"),
  terraformVersion: hostOnly(z.string(), "the Terraform version"),
  actions: hcpOnly(z.strictObject({ "is-cancelable": z.boolean(), "is-confirmable": z.boolean(), "is-discardable": z.boolean(), "is-force-cancelable": z.boolean() })),
  permissions: hcpOnly(
    z.strictObject({ "can-apply": z.boolean(), "can-cancel": z.boolean(), "can-discard": z.boolean(), "can-force-cancel": z.boolean(), "can-force-execute": z.boolean() }),
  ),
  allowEmptyApply: hcpOnly(z.boolean()),
  allowConfigGeneration: hcpOnly(z.boolean()),
  forceCancelAvailableAt: hcpOnly(z.null()),
  positionInQueue: hcpOnly(count),
  refresh: hcpOnly(z.boolean()),
  refreshOnly: hcpOnly(z.boolean()),
  savePlan: hcpOnly(z.boolean()),
  policyPaths: hcpOnly(z.array(z.string())),
  replaceAddrs: hcpOnly(z.array(z.string())),
  targetAddrs: hcpOnly(z.array(z.string())),
  variables: hcpOnly(z.array(z.strictObject({ key: z.string(), value: z.string() }))),
});

/** What a plan and an apply share: a status, its timestamps and the resource counts. */
const phase = {
  logReadUrl: z.string().nullable().describe("where the log is read (`artifacts.planLog` / `artifacts.applyLog`); null without one"),
  status: hostOnly(z.string(), "`pending`, `queued`, `running`, `finished`, `errored`, `canceled`, `unreachable`, ..."),
  statusTimestamps: hostOnly(StatusTimestamps, "`queued-at`, `started-at`, `finished-at`, ..."),
  resourceAdditions: hostOnly(count, "resources to add"),
  resourceChanges: hostOnly(count, "resources to change"),
  resourceDestructions: hostOnly(count, "resources to destroy"),
  resourceImports: hostOnly(count, "resources to import"),
};
export const PlanAttributes = z.object({ ...phase, hasChanges: hostOnly(z.boolean(), "whether the plan changes anything") });
export const ApplyAttributes = z.object(phase);

export const RunEventAttributes = z.object({
  action: z.string().describe("`created`, `task_stage_<status>`, `task_result_<status>`, `overridden`, `commented`"),
  description: z.string(),
  createdAt: UtcTimestamp,
});

export const CommentAttributes = z.object({ body: z.string(), createdAt: UtcTimestamp });

export const PolicyCheckAttributes = z.object({
  status: z.string(),
  scope: hostOnly(z.string(), "`organization` or `workspace`"),
  statusTimestamps: hostOnly(StatusTimestamps, "`queued-at`, `passed-at`, ..."),
  result: hostOnly(
    z.strictObject({
      result: z.boolean(),
      passed: count,
      "total-failed": count,
      "hard-failed": count,
      "soft-failed": count,
      "advisory-failed": count,
      duration: count,
    }),
    "the counts of the check",
  ),
  actions: hostOnly(z.strictObject({ "is-overridable": z.boolean() }), "whether it may be overridden"),
  permissions: hostOnly(z.strictObject({ "can-override": z.boolean() }), "whether the caller may override it"),
});

/** A run event's actor, included on request (`include=actor`): a user of the directory. */
export const UserAttributes = z.object({ username: z.string() });

/**
 * A run's configuration version (`GET /configuration-versions/:id`, `include=configuration_version`;
 * D8, D49) in go-tfe's ConfigurationVersion names: runplane knows its id, whether the run is
 * speculative and whether it can be downloaded; it takes no uploads and queues nothing.
 */
export const ConfigurationVersionAttributes = z.object({
  autoQueueRuns: z.boolean().describe("always false: runplane queues no runs"),
  error: z.string(),
  errorMessage: z.string(),
  source: z.string().describe("`tfe-api`: the host gave it through the API"),
  speculative: z.boolean(),
  provisional: z.boolean(),
  status: z.string().describe("`uploaded`, or `archived` when the host marked it not downloadable"),
  statusTimestamps: StatusTimestamps,
  uploadUrl: z.null().describe("runplane takes no uploads"),
});

/**
 * What the run task request carried of the commit (`include=configuration_version.ingress_attributes`):
 * go-tfe's IngressAttributes names; an empty string where the host sent none.
 */
export const IngressAttributesAttributes = z.object({
  branch: z.string(),
  commitSha: z.string(),
  commitUrl: z.string(),
  pullRequestUrl: z.string(),
  isPullRequest: z.boolean(),
});
