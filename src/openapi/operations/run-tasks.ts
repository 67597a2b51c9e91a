import * as z from "zod";
import { TaskCreateSchema, TaskUpdateSchema, WorkspaceTaskCreateSchema, WorkspaceTaskUpdateSchema } from "../../schemas/run-task-config.js";
import { CallbackBodySchema, TAG_LEVELS } from "../../schemas/run-tasks.js";
import { STAGE_INCLUDES as STAGE_INCLUDE_TABLE, TASK_INCLUDES as TASK_INCLUDE_TABLE } from "../../http/routes/run-task-support.js";
import { RESULT_INCLUDES as RESULT_INCLUDE_TABLE } from "../../http/routes/delivery-attempts.js";
import { toOne } from "./configuration.js";
import { includeParam, PAGE_PARAMS, type OperationDoc } from "./types.js";

// The include names the routes accept (D8), from the tables the router validates them against (D30).
const TASK_INCLUDES = Object.keys(TASK_INCLUDE_TABLE);
const STAGE_INCLUDES = Object.keys(STAGE_INCLUDE_TABLE);
const RESULT_INCLUDES = Object.keys(RESULT_INCLUDE_TABLE);
const comment = z.string().max(1000).nullable().optional();

const TASKS = "Run tasks";
const STAGES = "Task stages and results";
const INTEGRATION = "Integration callbacks and artifacts";
const TASK_DOC = { resource: "tasks", included: ["workspace-tasks", "workspaces"] } as const;
/** decision D34: the pool whose agents carry the task's requests; `data: null` for none (update: absent keeps it). */
const AGENT_POOL_RELATIONSHIP = z.object({
  "agent-pool": z.object({ data: z.object({ type: z.literal("agent-pools"), id: z.string().min(1) }).nullable() }).optional(),
});

/** Organization and workspace run tasks (spec 4.2). */
function taskConfigOperations(): Record<string, OperationDoc> {
  const tasks = TASKS;
  const taskDoc = TASK_DOC;
  return {
    "GET /organizations/:organization_name/tasks": {
      tag: tasks,
      summary: "List an organization's run tasks",
      query: [includeParam(TASK_INCLUDES), ...PAGE_PARAMS],
      success: { status: 200, body: { collection: "tasks", paging: "always", included: taskDoc.included } },
      errors: [400, 422],
    },
    "POST /organizations/:organization_name/tasks": {
      tag: tasks,
      summary: "Create a run task; the URL is verified with a signed request first (D15); `hmac-key` is write-only (D11)",
      query: [includeParam(TASK_INCLUDES)],
      body: { types: ["tasks"], attributes: TaskCreateSchema, relationships: AGENT_POOL_RELATIONSHIP },
      success: { status: 201, body: taskDoc },
    },
    "GET /tasks/:task_id": { tag: tasks, summary: "Show a run task", query: [includeParam(TASK_INCLUDES)], success: { status: 200, body: taskDoc }, errors: [400] },
    "PATCH /tasks/:task_id": { tag: tasks, summary: "Update a run task", query: [includeParam(TASK_INCLUDES)], body: { types: ["tasks"], attributes: TaskUpdateSchema, relationships: AGENT_POOL_RELATIONSHIP }, success: { status: 200, body: taskDoc }, errors: [409] },
    "DELETE /tasks/:task_id": { tag: tasks, summary: "Delete a run task and its workspace attachments", success: { status: 204, body: null } },
    "GET /workspaces/:workspace_id/tasks": {
      tag: tasks,
      summary: "List a workspace's run tasks",
      query: PAGE_PARAMS,
      success: { status: 200, body: { collection: "workspace-tasks", paging: "always" } },
      errors: [400, 422],
    },
    "POST /workspaces/:workspace_id/tasks": {
      tag: tasks,
      summary: "Attach a run task to a workspace (`post_apply` only advisory)",
      body: { types: ["workspace-tasks"], attributes: WorkspaceTaskCreateSchema, relationships: z.object({ task: toOne("tasks") }) },
      success: { status: 201, body: { resource: "workspace-tasks" } },
    },
    "GET /workspaces/:workspace_id/tasks/:workspace_task_id": { tag: tasks, summary: "Show a workspace run task", success: { status: 200, body: { resource: "workspace-tasks" } } },
    "PATCH /workspaces/:workspace_id/tasks/:workspace_task_id": {
      tag: tasks,
      summary: "Update a workspace run task",
      body: { types: ["workspace-tasks"], attributes: WorkspaceTaskUpdateSchema },
      success: { status: 200, body: { resource: "workspace-tasks" } },
      errors: [409],
    },
    "DELETE /workspaces/:workspace_id/tasks/:workspace_task_id": { tag: tasks, summary: "Detach a run task from a workspace", success: { status: 204, body: null } },
  };
}

/** Task stages, results, their delivery attempts and outcomes (spec 4.3, D18, D31). */
function stageOperations(): Record<string, OperationDoc> {
  const stages = STAGES;
  return {
    "GET /runs/:run_id/task-stages": {
      tag: stages,
      summary: "List a run's task stages",
      query: [includeParam(STAGE_INCLUDES), ...PAGE_PARAMS],
      success: { status: 200, body: { collection: "task-stages", paging: "always", included: ["runs", "workspaces", "task-results"] } },
      errors: [400, 422],
    },
    "GET /task-stages/:task_stage_id": {
      tag: stages,
      summary: "Show a task stage",
      query: [includeParam(STAGE_INCLUDES)],
      success: { status: 200, body: { resource: "task-stages", included: ["runs", "workspaces", "task-results"] } },
      errors: [400],
    },
    "POST /task-stages/:task_stage_id/actions/override": {
      tag: stages,
      summary: "Override a stage awaiting override (D13)",
      description: "The body is optional: plain JSON `{\"comment\": ...}` as go-tfe sends it, or a JSON:API document with `data.attributes.comment`.",
      query: [includeParam(STAGE_INCLUDES)],
      body: {
        required: false,
        plainJson: true,
        document: z.union([z.object({ comment }), z.object({ data: z.object({ type: z.string().optional(), attributes: z.object({ comment }).optional() }) })]),
      },
      success: { status: 200, body: { resource: "task-stages", included: ["runs", "workspaces", "task-results"] } },
      errors: [409],
    },
    "GET /task-results/:task_result_id": {
      tag: stages,
      summary: "Show a task result",
      description: "`include=delivery-attempts` adds the `delivery-attempts` relationship and the attempts kept (the newest 20, D31); without it the document has no such member.",
      query: [includeParam(RESULT_INCLUDES)],
      success: { status: 200, body: { resource: "task-results", included: ["delivery-attempts"] } },
      errors: [400],
    },
    "GET /task-results/:task_result_id/delivery-attempts": {
      tag: stages,
      summary: "List a result's delivery attempts, newest first (D31)",
      description:
        "Each attempt of the run task request: when it started, how long it took, its outcome (an HTTP status, a connection error code, or skipped and why) and up to 1 KiB of the integration's answer, control characters removed and the request's access token, HMAC key and signature redacted. The newest 20 per result are kept, for the retention of option `attempts.retention`.",
      query: PAGE_PARAMS,
      success: { status: 200, body: { collection: "delivery-attempts", paging: "always" } },
      errors: [400, 422],
    },
    "POST /task-results/:task_result_id/actions/retry": {
      tag: stages,
      summary: "Make the next attempt of a retrying result now (D31)",
      description:
        "Needs the workspace's run-tasks permission and read access to its runs (404 otherwise, D4). 202: a dispatcher makes the attempt at once. 409 when the result is final, past its deadline (D16), not being retried, or has an attempt under way.",
      // Takes no body; one sent is still read as any POST body is (D6), and otherwise ignored.
      body: { required: false, plainJson: true, document: z.object({}).describe("nothing is read from it") },
      success: { status: 202, body: null },
      errors: [409],
    },
    "GET /task-results/:task_result_id/outcomes": {
      tag: stages,
      summary: "List a result's outcomes",
      query: [
        { name: "filter[severity]", description: "the `severity` tag's label, case-insensitive (D18)", schema: z.string() },
        { name: "filter[status]", description: "the `status` tag's label, case-insensitive (D18)", schema: z.string() },
        { name: "sort", description: `most severe first (${TAG_LEVELS.slice().reverse().join(" > ")}); 400 otherwise`, schema: z.literal("severity") },
        ...PAGE_PARAMS,
      ],
      success: { status: 200, body: { collection: "task-result-outcomes", paging: "always" } },
      errors: [400, 422],
    },
    "GET /task-result-outcomes/:outcome_id": { tag: stages, summary: "Show an outcome (`links.body` when it has a body, D18)", success: { status: 200, body: { resource: "task-result-outcomes" } } },
    "GET /task-result-outcomes/:outcome_id/body": { tag: stages, summary: "An outcome's Markdown body", success: { status: 200, body: { media: "text/markdown", format: "text" } } },
  };
}

/** What integrations call and read: the callback and the artifacts (spec 4.1, D24). */
function integrationOperations(): Record<string, OperationDoc> {
  const integration = INTEGRATION;
  return {
    "PATCH /task-results/:task_result_id/callback": {
      tag: integration,
      summary: "The integration reports a result (bearer: the request's `access_token`)",
      description: "Outcomes are read from `data.relationships.outcomes` and the legacy top-level `relationships`; 5 MiB per request, 1,000 outcomes and 10 MiB of bodies per result (D26).",
      security: "access-token",
      body: { document: CallbackBodySchema, required: true },
      success: { status: 200, body: null },
      errors: [409],
      // decision D17a: an unknown result is 401 like a wrong token, so no answer tells it exists.
      never: [404],
    },
    "GET /plans/:plan_id/json-output": {
      tag: integration,
      summary: "The run's plan as `terraform show -json` writes it, from option `artifacts.planJson` (D24)",
      security: "api-or-access-token",
      success: { status: 200, body: { media: "application/json", format: "json" } },
    },
    "GET /configuration-versions/:configuration_version_id/download": {
      tag: integration,
      summary: "The run's configuration as a gzip tarball, from option `artifacts.configurationVersion` (D24)",
      security: "api-or-access-token",
      success: { status: 200, body: { media: "application/octet-stream", format: "binary" } },
    },
  };
}

/** Run tasks, task stages, results, outcomes, the callback and the artifacts integrations read (spec 4.1-4.3, D24). */
export function runTaskOperations(): Record<string, OperationDoc> {
  return { ...taskConfigOperations(), ...stageOperations(), ...integrationOperations() };
}
