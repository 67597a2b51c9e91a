import type { ArtifactRun, PolicyCheckDetails, RunDetails, RunProviders } from "../../src/index.js";
import { demoPlanJson } from "./artifacts.js";

/**
 * What the reference server, as the host, says of its runs (issue 27): runplane keeps only what
 * run tasks need, so a run's status, its plan's status and resource counts, has-changes, the
 * Terraform version and the policy checks come from here (option `runs`), and the plan's and the
 * apply's logs from `artifacts.planLog` and `artifacts.applyLog` (served at `log-read-url`, D32). A real host answers from its own records; the demo derives everything from
 * the demo plan (`./artifacts.ts`): every demo run is planned, never applied.
 */

const at = (run: ArtifactRun, seconds: number): string => new Date(Date.parse(run.createdAt) + seconds * 1000).toISOString();

/** The demo plan's resource changes by action. */
function counts(run: ArtifactRun) {
  const changes = (demoPlanJson(run).resource_changes as { change: { actions: string[] } }[]).map((c) => c.change.actions);
  const count = (action: string) => changes.filter((actions) => actions.includes(action)).length;
  return { resourceAdditions: count("create"), resourceChanges: count("update"), resourceDestructions: count("delete"), resourceImports: 0 };
}

export function demoRunDetails(run: ArtifactRun): RunDetails {
  const plan = counts(run);
  const hasChanges = plan.resourceAdditions + plan.resourceChanges + plan.resourceDestructions > 0;
  return {
    status: "planned",
    statusTimestamps: { "plan-queued-at": at(run, 1), "planning-at": at(run, 2), "planned-at": at(run, 5) },
    hasChanges,
    isDestroy: false,
    autoApply: false,
    source: "tfe-api",
    terraformVersion: "1.9.8",
    plan: { status: "finished", hasChanges, ...plan, statusTimestamps: { "queued-at": at(run, 1), "started-at": at(run, 2), "finished-at": at(run, 5) } },
    apply: { status: "pending" },
  };
}

export function demoPolicyChecks(run: ArtifactRun): PolicyCheckDetails[] {
  return [
    {
      id: `polchk-${run.id.replace(/^run-/, "")}`.slice(0, 200),
      status: "passed",
      scope: "organization",
      statusTimestamps: { "queued-at": at(run, 5), "passed-at": at(run, 6) },
      result: { result: true, passed: 1, totalFailed: 0, hardFailed: 0, softFailed: 0, advisoryFailed: 0, duration: 40 },
      isOverridable: false,
      canOverride: false,
    },
  ];
}

/** The plan's log as Terraform prints it, from the demo plan. */
export function demoPlanLog(run: ArtifactRun): string {
  const plan = demoPlanJson(run);
  const symbol: Record<string, string> = { create: "+", update: "~", delete: "-" };
  const lines = (plan.resource_changes as { address: string; change: { actions: string[] } }[])
    .filter((c) => !c.change.actions.includes("no-op"))
    .map((c) => `  ${c.change.actions.map((a) => symbol[a] ?? a).join("/")} ${c.address}`);
  const { resourceAdditions, resourceChanges, resourceDestructions } = counts(run);
  return [
    `Terraform v${String(plan.terraform_version)}`,
    "",
    "Terraform will perform the following actions:",
    "",
    ...lines,
    "",
    `Plan: ${resourceAdditions} to add, ${resourceChanges} to change, ${resourceDestructions} to destroy.`,
    "",
  ].join("\n");
}

/**
 * The apply's log. Demo runs wait for confirmation (apply `pending`), so it says so, in the words
 * Terraform prints before an apply, instead of inventing one that never ran.
 */
export function demoApplyLog(run: ArtifactRun): string {
  const plan = demoPlanJson(run);
  return [
    `Terraform v${String(plan.terraform_version)}`,
    "",
    `Run ${run.id} is planned and waits for confirmation: nothing has been applied yet.`,
    "",
  ].join("\n");
}

/**
 * The run of one of the demo's policy checks, for `GET /policy-checks/:id` (D36): its id names it.
 * A real host looks the check up in its own records; runplane then reads it from `policyChecks(run)`.
 */
export function demoPolicyCheckRun(policyCheckId: string): string | null {
  return policyCheckId.startsWith("polchk-") && policyCheckId.length > "polchk-".length ? `run-${policyCheckId.slice("polchk-".length)}` : null;
}

export const demoRuns: RunProviders = { details: demoRunDetails, policyChecks: demoPolicyChecks, policyCheckRun: demoPolicyCheckRun };
