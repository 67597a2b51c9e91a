import * as z from "zod";

/**
 * What only the host knows of a run, given through option `runs`: the run's status and
 * its timestamps, its plan and apply, and its policy checks. Every member is optional; the API
 * writes what the host gives (decision D1: the hcp-terraform dialect fills the rest with go-tfe's
 * zero values). Checked when the host returns it: a value that does not fit is logged and ignored.
 */

const STATUS = /^[a-z][a-z0-9_]{0,63}$/;
const status = z.string().regex(STATUS, "must be a lower-case status word such as `planned_and_finished`");
/**
 * D9: `<status>-at` keys, hyphenated; a Date or an RFC 3339 string, written as task stages write
 * theirs (RFC 3339, UTC as `+00:00`, with milliseconds: D36, so the host's fractions are kept).
 */
const StatusTimestampsSchema = z.record(
  z.string().regex(/^[a-z][a-z0-9]*(?:-[a-z0-9]+)*-at$/, "must be `<status>-at`, hyphenated"),
  z.union([z.date(), z.iso.datetime({ offset: true })]).transform((at) => `${new Date(at).toISOString().slice(0, 23)}+00:00`),
);
const count = z.number().int().min(0);

const PhaseDetailsSchema = z.strictObject({
  status: status.optional(),
  statusTimestamps: StatusTimestampsSchema.optional(),
  resourceAdditions: count.optional(),
  resourceChanges: count.optional(),
  resourceDestructions: count.optional(),
  resourceImports: count.optional(),
});

export const RunDetailsSchema = z.strictObject({
  status: status.optional(),
  statusTimestamps: StatusTimestampsSchema.optional(),
  hasChanges: z.boolean().optional(),
  isDestroy: z.boolean().optional(),
  autoApply: z.boolean().optional(),
  source: z.string().max(64).optional(),
  terraformVersion: z.string().max(64).optional(),
  plan: PhaseDetailsSchema.extend({ hasChanges: z.boolean().optional() }).optional(),
  apply: PhaseDetailsSchema.optional(),
});
/** What `runs.details(run)` returns (camelCase; `null` when the host knows nothing of the run). */
export type RunDetails = z.input<typeof RunDetailsSchema>;
export type CheckedRunDetails = z.output<typeof RunDetailsSchema>;
export type PhaseDetails = z.output<typeof PhaseDetailsSchema> & { hasChanges?: boolean };

export const PolicyCheckDetailsSchema = z.strictObject({
  /** The host's id (`polchk-...` in HCP Terraform). */
  id: z.string().min(1).max(200),
  status,
  scope: z.enum(["organization", "workspace"]).optional(),
  statusTimestamps: StatusTimestampsSchema.optional(),
  result: z
    .strictObject({
      result: z.boolean(),
      passed: count,
      totalFailed: count,
      hardFailed: count,
      softFailed: count,
      advisoryFailed: count,
      duration: count,
    })
    .optional(),
  isOverridable: z.boolean().optional(),
  canOverride: z.boolean().optional(),
});
/** One item of what `runs.policyChecks(run)` returns. */
export type PolicyCheckDetails = z.input<typeof PolicyCheckDetailsSchema>;
export type CheckedPolicyCheck = z.output<typeof PolicyCheckDetailsSchema>;

/** decision D26-like bound: the checks of one run are listed in pages from the host's array. */
export const PolicyChecksSchema = z.array(PolicyCheckDetailsSchema).max(1000);
