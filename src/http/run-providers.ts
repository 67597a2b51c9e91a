import * as z from "zod";
import type { Logger } from "../logger.js";
import type { RunRecord } from "../schemas/run-task-records.js";
import {
  PolicyChecksSchema,
  RunDetailsSchema,
  type CheckedPolicyCheck,
  type CheckedRunDetails,
  type PolicyCheckDetails,
  type RunDetails,
} from "../schemas/run-details.js";

type Maybe<T> = T | null | undefined | Promise<T | null | undefined>;

/**
 * What only the host knows of its runs, read when an integration reads a run through
 * `GET /runs/:id`, `/plan`, `/apply` or `/policy-checks`. Each provider is given the run as
 * runplane keeps it and may return null when it knows nothing.
 */
export interface RunProviders {
  /** The run's status and its timestamps, its plan and apply (status, resource counts), has-changes, Terraform version. */
  details?: (run: RunRecord) => Maybe<RunDetails>;
  /** The run's policy checks; without this provider (or with null) the list is empty. */
  policyChecks?: (run: RunRecord) => Maybe<readonly PolicyCheckDetails[]>;
  /**
   * The id of the run a policy check belongs to, or null (D36): `GET /policy-checks/:id` has only
   * the host's id. runplane then reads the check from `policyChecks(run)`, so both agree. Without
   * this provider every policy check id is 404.
   */
  policyCheckRun?: (policyCheckId: string) => Maybe<string>;
  /**
   * A policy check's output as the policy engine printed it, for `GET /policy-checks/:id/output`
   * (go-tfe's `PolicyChecks.Logs`, D49). Without it (or with null) runplane writes a summary of
   * the check's result.
   */
  policyCheckOutput?: (run: RunRecord, check: CheckedPolicyCheck) => Maybe<string>;
}

/**
 * A provider's answer checked against its schema. A value that does not fit is the host's bug: it
 * is logged (the path and the problem, never the value) and ignored, so the run still reads with
 * what runplane knows instead of failing the integration.
 */
async function checked<T extends z.ZodType>(logger: Logger, option: string, schema: T, value: unknown): Promise<z.output<T> | null> {
  const given = await value;
  if (given === null || given === undefined) return null;
  const result = schema.safeParse(given);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  logger.warn(`option ${option} returned a value runplane cannot use; ignored`, { path: issue.path.join("."), problem: issue.message });
  return null;
}

export const runDetailsOf = (providers: RunProviders | undefined, logger: Logger, run: RunRecord): Promise<CheckedRunDetails | null> =>
  checked(logger, "runs.details", RunDetailsSchema, providers?.details?.(run));

export const policyChecksOf = async (providers: RunProviders | undefined, logger: Logger, run: RunRecord): Promise<CheckedPolicyCheck[]> =>
  (await checked(logger, "runs.policyChecks", PolicyChecksSchema, providers?.policyChecks?.(run))) ?? [];

/** The run id the host gives for a policy check id (option `runs.policyCheckRun`), or null. */
export const policyCheckRunOf = (providers: RunProviders | undefined, logger: Logger, policyCheckId: string): Promise<string | null> =>
  checked(logger, "runs.policyCheckRun", z.string().min(1), providers?.policyCheckRun?.(policyCheckId));

/** The host's output of a policy check (option `runs.policyCheckOutput`), or null. */
export const policyCheckOutputOf = (providers: RunProviders | undefined, logger: Logger, run: RunRecord, check: CheckedPolicyCheck): Promise<string | null> =>
  checked(logger, "runs.policyCheckOutput", z.string().max(10 * 1024 * 1024), providers?.policyCheckOutput?.(run, check));
