/**
 * decision D49: the filters and searches of HCP Terraform's run lists (`GET /workspaces/:id/runs`,
 * `GET /organizations/:name/runs`; go-tfe's RunListOptions and RunListForOrganizationOptions)
 * that make sense for runs a host reports. Pure: the caller gathers what each run is (its record,
 * the host's details, its creator's username, its workspace's name) and asks `runMatches`.
 */

/** What a list asks for; every member optional. Comma-separated values are any-of. */
export interface RunListFilter {
  statuses?: readonly string[];
  sources?: readonly string[];
  operations?: readonly string[];
  statusGroups?: readonly StatusGroup[];
  workspaceNames?: readonly string[];
  /** `search[user]`: the creator's username, whole, any case. */
  user?: string;
  /** `search[commit]`: the commit SHA, whole. */
  commit?: string;
  /** `search[basic]`: part of the run id, message, commit SHA or creator's username, any case. */
  basic?: string;
}

/** What one run is, as far as the filters look. */
export interface RunFacts {
  id: string;
  message: string;
  isSpeculative: boolean;
  commitHash: string | null;
  /** The host's (option `runs.details`), or undefined when it says nothing. */
  status?: string;
  source?: string;
  isDestroy?: boolean;
  username: string | null;
  workspaceName: string | null;
}

export const STATUS_GROUPS = ["final", "non_final", "discardable"] as const;
export type StatusGroup = (typeof STATUS_GROUPS)[number];

/** Run statuses after which nothing more happens (HCP's run states: completion). */
const FINAL_RUN_STATUSES = ["applied", "planned_and_finished", "planned_and_saved", "errored", "canceled", "force_canceled", "discarded", "policy_soft_failed"];
/** Run statuses that wait for a person to confirm or discard the run. */
const DISCARDABLE_RUN_STATUSES = ["planned", "cost_estimated", "policy_checked", "policy_override", "post_plan_completed"];

/** HCP's run operation of a run: a speculative run only plans, a destroy run destroys, the rest plan and apply. */
export function runOperation(run: Pick<RunFacts, "isSpeculative" | "isDestroy">): "plan_only" | "destroy" | "plan_and_apply" {
  if (run.isSpeculative) return "plan_only";
  return run.isDestroy === true ? "destroy" : "plan_and_apply";
}

function inGroup(status: string | undefined, group: StatusGroup): boolean {
  if (group === "discardable") return status !== undefined && DISCARDABLE_RUN_STATUSES.includes(status);
  const final = status !== undefined && FINAL_RUN_STATUSES.includes(status);
  return group === "final" ? final : !final;
}

const anyOf = (wanted: readonly string[] | undefined, value: string | undefined): boolean =>
  wanted === undefined || (value !== undefined && wanted.includes(value));

/** Whether the run's searches match: `search[user]` and `search[commit]` take priority over `search[basic]`, as HCP says. */
function searchMatches(run: RunFacts, filter: RunListFilter): boolean {
  const user = filter.user?.toLowerCase();
  if (user !== undefined || filter.commit !== undefined) {
    return (user === undefined || run.username?.toLowerCase() === user) && (filter.commit === undefined || run.commitHash === filter.commit);
  }
  if (filter.basic === undefined) return true;
  const words = filter.basic.toLowerCase();
  return [run.id, run.message, run.commitHash ?? "", run.username ?? ""].some((field) => field.toLowerCase().includes(words));
}

export function runMatches(run: RunFacts, filter: RunListFilter): boolean {
  return (
    anyOf(filter.statuses, run.status) &&
    anyOf(filter.sources, run.source) &&
    anyOf(filter.operations, runOperation(run)) &&
    anyOf(filter.workspaceNames, run.workspaceName ?? undefined) &&
    (filter.statusGroups === undefined || filter.statusGroups.some((g) => inGroup(run.status, g))) &&
    searchMatches(run, filter)
  );
}

/** Whether answering needs the host's details of each run (status, source, destroy). */
export const needsDetails = (filter: RunListFilter): boolean =>
  filter.statuses !== undefined || filter.sources !== undefined || filter.operations !== undefined || filter.statusGroups !== undefined;

/** Whether the list is filtered at all (else it is cut in storage, D7). */
export const isFiltered = (filter: RunListFilter): boolean => Object.values(filter).some((v) => v !== undefined);
