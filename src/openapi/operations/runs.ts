import * as z from "zod";
import { CommentCreateSchema } from "../../schemas/run-comments.js";
import { RUN_INCLUDES } from "../../http/routes/runs.js";
import { RUN_EVENT_INCLUDES } from "../../http/routes/run-events.js";
import { POLICY_CHECK_INCLUDES } from "../../http/routes/policy-checks.js";
import { CONFIGURATION_VERSION_INCLUDES } from "../../http/routes/configuration-versions.js";
import { includeParam, PAGE_PARAMS, type OperationDoc, type QueryParam } from "./types.js";

/** go-tfe's log reader asks for a log in chunks (logreader.go): bytes `[offset, offset + limit)`. */
const LOG_PARAMS: readonly QueryParam[] = [
  { name: "limit", description: "at most this many bytes, from `offset` (go-tfe's log reader)", schema: z.int().min(0) },
  { name: "offset", description: "skip this many bytes of the log first", schema: z.int().min(0) },
];
const text = { media: "text/plain", format: "text" } as const;

const TAG = "Runs (read side)";
const HOST = "Status, resource counts and timestamps are the host's (option `runs.details`): left out when it gives none in the default dialect, go-tfe's zero values in hcp-terraform.";

/** A run, its plan and apply, and their logs (D32). */
function runAndLogOperations(): Record<string, OperationDoc> {
  const tag = TAG;
  const host = HOST;
  return {
    "GET /runs/:run_id": {
      tag,
      summary: "Show a run: what runplane stores, what the host gives, its task stages, plan and apply",
      description: `${host} A trailing slash is the same route.`,
      query: [includeParam(Object.keys(RUN_INCLUDES))],
      success: { status: 200, body: { resource: "runs", included: ["task-stages", "plans", "applies", "workspaces", "users", "configuration-versions", "ingress-attributes"] } },
      errors: [400],
    },
    "GET /runs/:run_id/plan": { tag, summary: "Show a run's plan", description: host, security: "api-or-access-token", success: { status: 200, body: { resource: "plans" } } },
    "GET /plans/:plan_id": { tag, summary: "Show a plan", description: host, security: "api-or-access-token", success: { status: 200, body: { resource: "plans" } } },
    "GET /plans/:plan_id/log": {
      tag,
      summary: "The plan's log, from option `artifacts.planLog`, for API credentials (`log-read-url` points at `GET /logs/:capability`)",
      security: "api-or-access-token",
      query: LOG_PARAMS,
      success: { status: 200, body: text },
      errors: [400],
    },
    "GET /runs/:run_id/apply": { tag, summary: "Show a run's apply", description: host, success: { status: 200, body: { resource: "applies" } } },
    "GET /applies/:apply_id": { tag, summary: "Show an apply", description: host, success: { status: 200, body: { resource: "applies" } } },
    "GET /applies/:apply_id/log": {
      tag,
      summary: "The apply's log, from option `artifacts.applyLog`, for API credentials (`log-read-url` points at `GET /logs/:capability`)",
      query: LOG_PARAMS,
      success: { status: 200, body: text },
      errors: [400],
    },
    "GET /logs/:capability": {
      tag,
      summary: "A plan's or an apply's log, where `log-read-url` points (decision D32)",
      description:
        "No Authorization header: the capability in the path is the credential, as HCP Terraform's archivist URLs. It names one log of one run, is honoured by every host sharing the keyring, and expires (option `logUrls.lifetime`, default an hour); a forged, altered or expired one is 404 like a missing object. Read the URL as given, replacing only its query.",
      security: "none",
      query: LOG_PARAMS,
      success: { status: 200, body: text },
      // The run is read from the storage, which may be away (D28).
      errors: [400, 404, 503],
    },
  };
}

/** A run's events, policy checks and comments (D36). */
function runHistoryOperations(): Record<string, OperationDoc> {
  const tag = TAG;
  return {
    "GET /runs/:run_id/run-events": {
      tag,
      summary: "List what happened to a run: created, task stage and result statuses, overrides, comments (not paged)",
      query: [includeParam(Object.keys(RUN_EVENT_INCLUDES))],
      success: { status: 200, body: { collection: "run-events", paging: "never", included: ["users", "comments"] } },
      errors: [400],
    },
    "GET /runs/:run_id/policy-checks": {
      tag,
      summary: "List a run's policy checks, from option `runs.policyChecks` (empty without it)",
      query: [includeParam(Object.keys(POLICY_CHECK_INCLUDES)), ...PAGE_PARAMS],
      success: { status: 200, body: { collection: "policy-checks", paging: "always", included: ["runs", "workspaces"] } },
      errors: [400, 422],
    },
    "GET /run-events/:run_event_id": {
      tag,
      summary: "Show a run event; its id names its run (D36), 404 for an id that does not carry its run",
      query: [includeParam(Object.keys(RUN_EVENT_INCLUDES))],
      success: { status: 200, body: { resource: "run-events", included: ["users", "comments"] } },
      errors: [400],
    },
    "GET /policy-checks/:policy_check_id": {
      tag,
      summary: "Show a policy check: the host names its run (option `runs.policyCheckRun`), 404 without it",
      query: [includeParam(Object.keys(POLICY_CHECK_INCLUDES))],
      success: { status: 200, body: { resource: "policy-checks", included: ["runs", "workspaces"] } },
      errors: [400],
    },
    "GET /policy-checks/:policy_check_id/output": {
      tag,
      summary: "A policy check's output as text (go-tfe PolicyChecks.Logs): option `runs.policyCheckOutput`, else a summary of its result (D49)",
      success: { status: 200, body: text },
    },
    "GET /configuration-versions/:configuration_version_id": {
      tag,
      summary: "Show the configuration version of a run you may read (go-tfe ConfigurationVersions.Read, D49)",
      description: "`status` is `uploaded` (`archived` when the host marked it not downloadable), `source` `tfe-api`, `upload-url` null: runplane takes no uploads.",
      query: [includeParam(Object.keys(CONFIGURATION_VERSION_INCLUDES))],
      success: { status: 200, body: { resource: "configuration-versions", included: ["ingress-attributes", "runs"] } },
      errors: [400],
    },
    "GET /runs/:run_id/comments": {
      tag,
      summary: "List a run's comments",
      query: PAGE_PARAMS,
      success: { status: 200, body: { collection: "comments", paging: "always" } },
      errors: [400, 422],
    },
    "POST /runs/:run_id/comments": {
      tag,
      summary: "Comment on a run (at most 1,000 comments per run)",
      body: { types: ["comments"], attributes: CommentCreateSchema, relationships: z.object({ run: z.object({ data: z.object({ type: z.literal("runs"), id: z.string() }) }) }).partial(), required: true },
      success: { status: 201, body: { resource: "comments" } },
    },
    "GET /comments/:comment_id": { tag, summary: "Show a comment", success: { status: 200, body: { resource: "comments" } } },
  };
}

const RUN_LIST_PARAMS: readonly QueryParam[] = [
  { name: "filter[status]", description: "comma-separated run statuses, as the host reports them (option `runs.details`)", schema: z.string() },
  { name: "filter[source]", description: "comma-separated run sources, as the host reports them", schema: z.string() },
  { name: "filter[operation]", description: "comma-separated: `plan_only` (speculative), `destroy`, `plan_and_apply`", schema: z.string() },
  { name: "search[user]", description: "the creator's username, whole, any case (priority over `search[basic]`)", schema: z.string() },
  { name: "search[commit]", description: "the commit SHA, whole (priority over `search[basic]`)", schema: z.string() },
  { name: "search[basic]", description: "part of the run id, message, commit SHA or creator's username, any case", schema: z.string() },
];
const ORGANIZATION_RUN_PARAMS: readonly QueryParam[] = [
  ...RUN_LIST_PARAMS,
  { name: "filter[workspace_names]", description: "comma-separated workspace names", schema: z.string() },
  { name: "filter[status_group]", description: "comma-separated: `final`, `non_final`, `discardable` (400 otherwise)", schema: z.string() },
  { name: "filter[agent_pool_names]", description: "not served: 400 (runplane does not know where the host runs its runs)", schema: z.string() },
  { name: "filter[timeframe]", description: "not served: 400", schema: z.string() },
];

/** decision D49: go-tfe's Runs.List and Runs.ListForOrganization. */
function runListOperations(): Record<string, OperationDoc> {
  const tag = TAG;
  const scan = "A filtered list, and an organization's, looks at the newest 1,000 runs of each workspace (D49).";
  return {
    "GET /workspaces/:workspace_id/runs": {
      tag,
      summary: "List the runs the host reported on a workspace, newest first",
      description: `${HOST} ${scan}`,
      query: [includeParam(Object.keys(RUN_INCLUDES)), ...PAGE_PARAMS, ...RUN_LIST_PARAMS],
      success: { status: 200, body: { collection: "runs", paging: "always", included: ["task-stages", "plans", "applies", "workspaces", "users", "configuration-versions", "ingress-attributes"] } },
      errors: [400, 422],
    },
    "GET /organizations/:organization_name/runs": {
      tag,
      summary: "List the runs of every workspace of the organization the caller may read, newest first",
      description: `${HOST} ${scan}`,
      query: [includeParam(Object.keys(RUN_INCLUDES)), ...PAGE_PARAMS, ...ORGANIZATION_RUN_PARAMS],
      success: { status: 200, body: { collection: "runs", paging: "always", included: ["task-stages", "plans", "applies", "workspaces", "users", "configuration-versions", "ingress-attributes"] } },
      errors: [400, 422],
    },
  };
}

/** The read side of a run that integrations call: runs, plans, applies, run events, comments, policy checks. */
export function runReadOperations(): Record<string, OperationDoc> {
  return { ...runAndLogOperations(), ...runListOperations(), ...runHistoryOperations() };
}
