import type { ArtifactRun, PolicyCheckDetails, RunDetails, RunProviders, TaskStageView } from "../../src/index.js";
import { demoPlanJson } from "./artifacts.js";

/**
 * What the reference server, as the host, says of its runs (D24): runplane keeps only what
 * run tasks need, so a run's status, its plan's status and resource counts, has-changes, the
 * Terraform version and the policy checks come from here (option `runs`), and the plan's and the
 * apply's logs from `artifacts.planLog` and `artifacts.applyLog` (served at `log-read-url`, D32).
 * A real host answers from its own records. The demo has no planner of its own, so it reads what
 * runplane recorded of the run, its creation and its task stages, and words it as HCP Terraform
 * words a run's states: the plan ran from the run's creation (or its pre_plan stage's end) until
 * the next stage started; the policy check ran once post_plan passed; a mandatory failure errors
 * the run. Every time given is one runplane recorded, so none is in the future. Demo runs are never
 * applied; the demo starts pre_apply without a confirmation.
 */

type Stages = readonly TaskStageView[];

/** Where a run got to, from its task stages: its status, its timestamps, when its plan and policy check ran. */
interface Progress {
  status: string;
  timestamps: Record<string, string>;
  plan: { startedAt: string; finishedAt: string | null };
  /** When the policy check ran (post_plan passed, or the plan finished without one), or null when it did not. */
  checkedAt: string | null;
  /** When the (pretend) apply ran: pre_apply passed, or the check without one (D47); null before. */
  appliedAt?: string | null;
}

const hyphens = (word: string) => word.replaceAll("_", "-");
const stageAt = (stage: TaskStageView, status: string): string => stage.statusTimestamps[`${hyphens(status)}-at`] ?? stage.updatedAt;

/** One stage's part: a run status, and whether and when the run went past it (null: it stops here). */
function stageStep(stage: TaskStageView, timestamps: Record<string, string>): { status: string; passedAt: string | null } {
  const name = hyphens(stage.stage);
  if (stage.status !== "pending") timestamps[`${name}-running-at`] = stageAt(stage, "running");
  switch (stage.status) {
    case "pending":
      return { status: "", passedAt: null };
    case "running":
      return { status: `${stage.stage}_running`, passedAt: null };
    case "awaiting_override":
      return { status: `${stage.stage}_awaiting_decision`, passedAt: null };
    case "passed":
      timestamps[`${name}-completed-at`] = stageAt(stage, "passed");
      return { status: `${stage.stage}_completed`, passedAt: stageAt(stage, "passed") };
    case "canceled":
      timestamps["canceled-at"] = stageAt(stage, "canceled");
      return { status: "canceled", passedAt: null };
    default:
      // failed, errored, unreachable: a mandatory task blocked the run (an advisory one never fails a stage).
      timestamps["errored-at"] = stageAt(stage, stage.status);
      return { status: "errored", passedAt: null };
  }
}

export function progressOf(run: ArtifactRun, stages: Stages): Progress {
  const find = (name: TaskStageView["stage"]) => stages.find((s) => s.stage === name);
  const timestamps: Record<string, string> = {};
  const progress = (status: string, plan: Progress["plan"], checkedAt: string | null = null): Progress => ({ status, timestamps, plan, checkedAt });
  let at = run.createdAt;
  const prePlan = find("pre_plan");
  if (prePlan) {
    const step = stageStep(prePlan, timestamps);
    if (step.passedAt === null) return progress(step.status || "pending", { startedAt: at, finishedAt: null });
    at = step.passedAt;
  }
  timestamps["plan-queued-at"] = timestamps["planning-at"] = at;
  const postPlan = find("post_plan");
  // The host starts post_plan once its plan finished: until then the run is planning.
  if (postPlan?.status === "pending") return progress("planning", { startedAt: at, finishedAt: null });
  const plan = { startedAt: at, finishedAt: postPlan ? stageAt(postPlan, "running") : at };
  timestamps["planned-at"] = plan.finishedAt;
  let checkedAt = plan.finishedAt;
  if (postPlan) {
    const step = stageStep(postPlan, timestamps);
    if (step.passedAt === null) return progress(step.status, plan);
    checkedAt = step.passedAt;
  }
  timestamps["policy-checked-at"] = checkedAt;
  const preApply = find("pre_apply");
  let appliedAt = checkedAt;
  if (preApply) {
    const step = stageStep(preApply, timestamps);
    if (step.passedAt === null) return progress(step.status || "policy_checked", plan, checkedAt);
    appliedAt = step.passedAt;
  }
  // decision D47: the demo applies nothing real, so its apply finishes the moment it may start; a
  // post_apply stage then runs, and never halts the run (only advisory tasks run there).
  timestamps["applying-at"] = timestamps["applied-at"] = appliedAt;
  const postApply = find("post_apply");
  let status = "applied";
  if (postApply?.status === "running" || postApply?.status === "passed") {
    if (stageStep(postApply, timestamps).passedAt === null) status = "post_apply_running";
  }
  return { ...progress(status, plan, checkedAt), appliedAt };
}

/** The demo plan's resource changes by action. */
function counts(run: ArtifactRun) {
  const changes = (demoPlanJson(run).resource_changes as { change: { actions: string[] } }[]).map((c) => c.change.actions);
  const count = (action: string) => changes.filter((actions) => actions.includes(action)).length;
  return { resourceAdditions: count("create"), resourceChanges: count("update"), resourceDestructions: count("delete"), resourceImports: 0 };
}

/**
 * decision D47: a run that stopped never applies, and HCP Terraform then says its apply is
 * `unreachable` ("will not run"): a final status, so go-tfe's log reader stops. The apply of a
 * run that got there finished at once; one still on its way is `pending`.
 */
function applyDetails(run: ArtifactRun, status: string, appliedAt: string | null): NonNullable<RunDetails["apply"]> {
  if (status === "errored" || status === "canceled") return { status: "unreachable" };
  if (appliedAt === null) return { status: "pending" };
  return { status: "finished", ...counts(run), statusTimestamps: { "queued-at": appliedAt, "started-at": appliedAt, "finished-at": appliedAt } };
}

export function demoRunDetails(run: ArtifactRun, stages: Stages): RunDetails {
  const { status, timestamps, plan, appliedAt } = progressOf(run, stages);
  const planned = plan.finishedAt !== null;
  const resources = planned ? counts(run) : { resourceAdditions: 0, resourceChanges: 0, resourceDestructions: 0, resourceImports: 0 };
  const hasChanges = resources.resourceAdditions + resources.resourceChanges + resources.resourceDestructions > 0;
  return {
    status,
    statusTimestamps: timestamps,
    hasChanges,
    isDestroy: false,
    autoApply: false,
    source: "tfe-api",
    terraformVersion: "1.9.8",
    plan: {
      status: planned ? "finished" : "running",
      hasChanges,
      ...resources,
      statusTimestamps: { "queued-at": plan.startedAt, "started-at": plan.startedAt, ...(plan.finishedAt !== null ? { "finished-at": plan.finishedAt } : {}) },
    },
    apply: applyDetails(run, status, appliedAt ?? null),
  };
}

/** The demo's one policy check, which passes, once the run got past post_plan; none before or otherwise. */
export function demoPolicyChecks(run: ArtifactRun, stages: Stages): PolicyCheckDetails[] {
  const { checkedAt } = progressOf(run, stages);
  if (checkedAt === null) return [];
  return [
    {
      id: `polchk-${run.id.replace(/^run-/, "")}`.slice(0, 200),
      status: "passed",
      scope: "organization",
      statusTimestamps: { "queued-at": checkedAt, "passed-at": checkedAt },
      result: { result: true, passed: 1, totalFailed: 0, hardFailed: 0, softFailed: 0, advisoryFailed: 0, duration: 0 },
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
 * The apply's log, as far as the apply got (D47): what a finished apply prints (the demo changes
 * nothing real), a line saying an apply that will not run never ran, or that one still waits.
 * Served with HCP's framing (D48): ETX follows once the apply's status is final.
 */
export function demoApplyLog(run: ArtifactRun, stages: Stages): string {
  const plan = demoPlanJson(run);
  const { status } = demoRunDetails(run, stages).apply!;
  const { resourceAdditions, resourceChanges, resourceDestructions } = counts(run);
  const said =
    status === "finished"
      ? `Apply complete! Resources: ${resourceAdditions} added, ${resourceChanges} changed, ${resourceDestructions} destroyed. (The demo applies nothing real.)`
      : status === "unreachable"
        ? `Run ${run.id} stopped before its apply: nothing was applied, and nothing will be.`
        : `Run ${run.id} has not been applied yet.`;
  return [`Terraform v${String(plan.terraform_version)}`, "", said, ""].join("\n");
}

/**
 * The run of one of the demo's policy checks, for `GET /policy-checks/:id` (D36): its id names it.
 * A real host looks the check up in its own records; runplane then reads it from `policyChecks(run)`.
 */
export function demoPolicyCheckRun(policyCheckId: string): string | null {
  return policyCheckId.startsWith("polchk-") && policyCheckId.length > "polchk-".length ? `run-${policyCheckId.slice("polchk-".length)}` : null;
}

/** The demo's run providers; `stagesOf` reads a run's task stages from the runplane that serves them. */
/** The apply log provider of the demo: it reads the run's stages, as its details do. */
export const createDemoApplyLog = (stagesOf: (runId: string) => Promise<Stages>) => async (run: ArtifactRun): Promise<string> => demoApplyLog(run, await stagesOf(run.id));

export function createDemoRunProviders(stagesOf: (runId: string) => Promise<Stages>): RunProviders {
  return {
    details: async (run) => demoRunDetails(run, await stagesOf(run.id)),
    policyChecks: async (run) => demoPolicyChecks(run, await stagesOf(run.id)),
    policyCheckRun: demoPolicyCheckRun,
  };
}
