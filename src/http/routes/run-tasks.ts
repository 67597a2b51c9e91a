import { invalid, notFound } from "../../errors.js";
import type { Workspace } from "../../schemas/directory.js";
import type { TaskCreate, TaskUpdate, TaskView, WorkspaceTaskCreate, WorkspaceTaskUpdate, WorkspaceTaskView } from "../../schemas/run-task-config.js";
import { readResourceBody } from "../documents.js";
import type { JsonApiDocument, ListOptions, ResourceDefinition } from "../jsonapi.js";
import { TaskAttributes, WorkspaceTaskAttributes } from "../../schemas/wire.js";
import { toPageRequest } from "../pagination.js";
import type { QuerySpec } from "../query.js";
import type { Route, RouteContext } from "../types.js";
import { TASK_INCLUDES, workspaceResource } from "./run-task-support.js";

/** Run task configuration: organization tasks (`tasks`) and workspace tasks (`workspace-tasks`); D3, D7, D11, D23. */

const seg = encodeURIComponent;

export const runTaskResources = (basePath: string): ResourceDefinition[] => [
  {
    type: "tasks",
    attributes: TaskAttributes,
    // Written with its wire keys already (`enforcement-level`), so the serializer must not touch it.
    verbatim: ["globalConfiguration"],
    self: (d) => `${basePath}/tasks/${seg(String(d.id))}`,
    relationships: {
      organization: { type: "organizations", related: (d) => `${basePath}/organizations/${seg(String(d.organization))}` },
      // decision D34: the pool whose agents carry the task's requests; `{ "data": null }` without one.
      agentPool: { type: "agent-pools" },
      workspaceTasks: { type: "workspace-tasks", many: true },
    },
  },
  {
    type: "workspace-tasks",
    attributes: WorkspaceTaskAttributes,
    self: (d) => `${basePath}/workspaces/${seg(String(d.workspace))}/tasks/${seg(String(d.id))}`,
    relationships: {
      task: { type: "tasks", related: (d) => `${basePath}/tasks/${seg(String(d.task))}` },
      workspace: { type: "workspaces", related: (d) => `${basePath}/workspaces/${seg(String(d.workspace))}` },
    },
  },
];

/** decision D11: `hmac-key` is write-only; every response carries it as null. */
const taskData = (t: TaskView, attachments: WorkspaceTaskView[]) => ({
  id: t.id,
  name: t.name,
  url: t.url,
  description: t.description,
  category: t.category,
  enabled: t.enabled,
  hmacKey: null,
  globalConfiguration: {
    enabled: t.globalConfiguration.enabled,
    stages: t.globalConfiguration.stages,
    "enforcement-level": t.globalConfiguration.enforcementLevel,
  },
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
  organization: t.organization,
  agentPool: t.agentPoolId,
  workspaceTasks: attachments.map((w) => w.id),
});

/** `stage` is the deprecated single-stage attribute older clients read: the first stage. */
const workspaceTaskData = (w: WorkspaceTaskView) => ({
  id: w.id,
  enforcementLevel: w.enforcementLevel,
  stage: w.stages[0] ?? null,
  stages: w.stages,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
  task: w.taskId,
  workspace: w.workspaceId,
});

/**
 * One task (show, create, update) or a page of them (list), each with its `workspace-tasks` linkage;
 * `include=workspace_tasks` and `include=workspace_tasks.workspace` add those resources once each (D8).
 */
async function taskDocument(ctx: RouteContext, tasks: TaskView | TaskView[], options?: ListOptions): Promise<JsonApiDocument> {
  const includes = ctx.query.includes;
  const list = Array.isArray(tasks) ? tasks : [tasks];
  const attachments = await Promise.all(list.map((t) => ctx.app.services.runTasks.workspaceTasks.ofTask(t.id)));
  const data = list.map((t, i) => taskData(t, attachments[i]!));
  const doc = Array.isArray(tasks) ? ctx.app.jsonapi.collection("tasks", data, options) : ctx.app.jsonapi.resource("tasks", data[0]!);
  if (includes.size === 0) return doc;
  const included: JsonApiDocument[] = [];
  const all = attachments.flat();
  for (const w of all) included.push(ctx.app.jsonapi.resource("workspace-tasks", workspaceTaskData(w)).data as JsonApiDocument);
  if (includes.has("workspace-tasks.workspace")) {
    for (const id of new Set(all.map((w) => w.workspaceId))) {
      const workspace = await workspaceResource(ctx.app, id);
      if (workspace) included.push(workspace);
    }
  }
  return { ...doc, included };
}

async function loadOrganization(ctx: RouteContext): Promise<string> {
  const name = ctx.params.organization_name!;
  if (!(await ctx.app.services.directory.organizations.get(name))) throw notFound();
  await ctx.authorize({ organization: name });
  return name;
}

async function loadTask(ctx: RouteContext): Promise<TaskView> {
  // A missing task is 404 from `get`; any other failure (a storage away: 503, D28) stays what it is.
  const task = await ctx.app.services.runTasks.tasks.get(ctx.params.task_id!);
  await ctx.authorize({ organization: task.organization });
  return task;
}

async function loadWorkspace(ctx: RouteContext): Promise<Workspace> {
  const workspace = await ctx.app.services.directory.workspaces.get(ctx.params.workspace_id!);
  if (!workspace) throw notFound();
  await ctx.authorize({ organization: workspace.organization, projectId: workspace.projectId, workspaceId: workspace.id });
  return workspace;
}

/** `data.relationships.task.data.id`, required on create; 422 with a pointer otherwise. */
function taskRelationship(relationships: Record<string, unknown>): string {
  const data = (relationships.task as { data?: { id?: unknown; type?: unknown } } | undefined)?.data;
  if (!data || typeof data !== "object") throw invalid("/data/relationships/task", "Task is required");
  if (data.type !== undefined && data.type !== "tasks") throw invalid("/data/relationships/task/data/type", 'type must be "tasks"');
  if (typeof data.id !== "string" || data.id === "") throw invalid("/data/relationships/task/data/id", "Task is required");
  return data.id;
}

/**
 * decision D34: `data.relationships.agent-pool`, HCP Terraform's relationship to the pool whose
 * agents carry the task's requests. Absent: unchanged (none on create); `data: null`: none.
 */
function agentPoolRelationship(relationships: Record<string, unknown>): string | null | undefined {
  if (!Object.hasOwn(relationships, "agent-pool")) return undefined;
  const member = relationships["agent-pool"] as { data?: { id?: unknown; type?: unknown } | null } | null;
  if (typeof member !== "object" || member === null || Array.isArray(member) || !("data" in member)) {
    throw invalid("/data/relationships/agent-pool", "agent-pool must be an object with data");
  }
  const data = member.data;
  if (data === null) return null;
  if (typeof data !== "object" || data === undefined || Array.isArray(data)) throw invalid("/data/relationships/agent-pool/data", "data must be an object or null");
  if (data.type !== undefined && data.type !== "agent-pools") throw invalid("/data/relationships/agent-pool/data/type", 'type must be "agent-pools"');
  if (typeof data.id !== "string" || data.id === "") throw invalid("/data/relationships/agent-pool/data/id", "id must be an agent pool id");
  return data.id;
}

/** A task document takes its includes on every route that answers with one, writes too (D8, D30). */
const TASK_QUERY: QuerySpec = { include: TASK_INCLUDES };

export const runTaskRoutes: Route[] = [
  {
    method: "GET",
    path: "/organizations/:organization_name/tasks",
    auth: "principal",
    query: { ...TASK_QUERY, page: "always" },
    async handle(ctx) {
      const organization = await loadOrganization(ctx);
      const page = ctx.query.page!;
      const result = await ctx.app.services.runTasks.tasks.list(organization, toPageRequest(page));
      const options = { url: ctx.url, pagination: { ...page, total: result.total } };
      return { status: 200, document: await taskDocument(ctx, result.items, options) };
    },
  },
  {
    method: "POST",
    path: "/organizations/:organization_name/tasks",
    auth: "principal",
    query: TASK_QUERY,
    async handle(ctx) {
      const organization = await loadOrganization(ctx);
      const body = readResourceBody(ctx.body, ["tasks"]);
      // The service validates the attributes with zod; the cast only names the expected shape.
      const agentPoolId = agentPoolRelationship(body.relationships);
      const task = await ctx.app.services.runTasks.tasks.create(organization, body.attributes as TaskCreate, { agentPoolId });
      return { status: 201, document: await taskDocument(ctx, task) };
    },
  },
  {
    method: "GET",
    path: "/tasks/:task_id",
    auth: "principal",
    query: TASK_QUERY,
    async handle(ctx) {
      return { status: 200, document: await taskDocument(ctx, await loadTask(ctx)) };
    },
  },
  {
    method: "PATCH",
    path: "/tasks/:task_id",
    auth: "principal",
    query: TASK_QUERY,
    async handle(ctx) {
      const task = await loadTask(ctx);
      const body = readResourceBody(ctx.body, ["tasks"], task.id);
      const agentPoolId = agentPoolRelationship(body.relationships);
      const updated = await ctx.app.services.runTasks.tasks.update(task.id, body.attributes as TaskUpdate, { agentPoolId });
      return { status: 200, document: await taskDocument(ctx, updated) };
    },
  },
  {
    method: "DELETE",
    path: "/tasks/:task_id",
    auth: "principal",
    async handle(ctx) {
      const task = await loadTask(ctx);
      await ctx.app.services.runTasks.tasks.delete(task.id);
      return { status: 204 };
    },
  },
  {
    method: "GET",
    path: "/workspaces/:workspace_id/tasks",
    auth: "principal",
    query: { page: "always" },
    async handle(ctx) {
      const workspace = await loadWorkspace(ctx);
      const page = ctx.query.page!;
      const result = await ctx.app.services.runTasks.workspaceTasks.list(workspace.id, toPageRequest(page));
      const options = { url: ctx.url, pagination: { ...page, total: result.total } };
      return { status: 200, document: ctx.app.jsonapi.collection("workspace-tasks", result.items.map(workspaceTaskData), options) };
    },
  },
  {
    method: "POST",
    path: "/workspaces/:workspace_id/tasks",
    auth: "principal",
    async handle(ctx) {
      const workspace = await loadWorkspace(ctx);
      const body = readResourceBody(ctx.body, ["workspace-tasks"]);
      const taskId = taskRelationship(body.relationships);
      const created = await ctx.app.services.runTasks.workspaceTasks.create(workspace.id, taskId, body.attributes as WorkspaceTaskCreate);
      return { status: 201, document: ctx.app.jsonapi.resource("workspace-tasks", workspaceTaskData(created)) };
    },
  },
  {
    method: "GET",
    path: "/workspaces/:workspace_id/tasks/:workspace_task_id",
    auth: "principal",
    async handle(ctx) {
      const workspace = await loadWorkspace(ctx);
      const w = await ctx.app.services.runTasks.workspaceTasks.get(workspace.id, ctx.params.workspace_task_id!);
      return { status: 200, document: ctx.app.jsonapi.resource("workspace-tasks", workspaceTaskData(w)) };
    },
  },
  {
    method: "PATCH",
    path: "/workspaces/:workspace_id/tasks/:workspace_task_id",
    auth: "principal",
    async handle(ctx) {
      const workspace = await loadWorkspace(ctx);
      const id = ctx.params.workspace_task_id!;
      const body = readResourceBody(ctx.body, ["workspace-tasks"], id);
      const w = await ctx.app.services.runTasks.workspaceTasks.update(workspace.id, id, body.attributes as WorkspaceTaskUpdate);
      return { status: 200, document: ctx.app.jsonapi.resource("workspace-tasks", workspaceTaskData(w)) };
    },
  },
  {
    method: "DELETE",
    path: "/workspaces/:workspace_id/tasks/:workspace_task_id",
    auth: "principal",
    async handle(ctx) {
      const workspace = await loadWorkspace(ctx);
      await ctx.app.services.runTasks.workspaceTasks.delete(workspace.id, ctx.params.workspace_task_id!);
      return { status: 204 };
    },
  },
];
