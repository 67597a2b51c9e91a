import { ApiError, conflict, invalid, notFound, quote } from "../errors.js";
import type { Workspace } from "../schemas/directory.js";
import type { Page, PageRequest } from "../schemas/records.js";
import { DEFAULT_GLOBAL_CONFIGURATION, type RunTaskRecord, type WorkspaceTaskRecord } from "../schemas/run-task-records.js";
import {
  TaskCreateSchema,
  TaskUpdateSchema,
  WorkspaceTaskCreateSchema,
  WorkspaceTaskUpdateSchema,
  type TaskCreate,
  type TaskUpdate,
  type TaskView,
  type WorkspaceTaskCreate,
  type WorkspaceTaskUpdate,
  type WorkspaceTaskView,
} from "../schemas/run-task-config.js";
import { isoNow, type ServiceContext } from "./context.js";
import { sealedBinding } from "./sealing.js";
import { checkStages, mergeGlobalConfiguration, toTaskView, toWorkspaceTaskView } from "./run-task-views.js";

export { toTaskView, toWorkspaceTaskView };
import { parseOrThrow } from "./validate.js";
import type { TaskEndpoint, TaskEndpointCheck } from "./task-endpoint.js";

export type { TaskEndpoint, TaskEndpointCheck } from "./task-endpoint.js";

const ATTRIBUTES = "/data/attributes";
const MAX_ATTEMPTS = 8;
const DUPLICATE_NAME = (): ApiError => invalid(`${ATTRIBUTES}/name`, "Name has already been taken");
const BUSY = (): ApiError => new ApiError("conflict", { detail: "The resource is being updated concurrently; retry the request" });

/** decision D11: the HMAC key is sealed for its row; nothing else ever opens it but delivery. */
export const hmacKeyBinding = (taskId: string): string => sealedBinding("tasks.hmac_key", taskId);


/** Without a wired check nothing can be verified, so nothing is saved (fail closed). */
const refuseUnverifiable = (ctx: ServiceContext): TaskEndpointCheck => async () => {
  ctx.logger.error("run task endpoint check is not configured; refusing to save a run task URL");
  throw new ApiError("internal");
};

/** Organization run tasks and workspace run tasks (type `tasks`, `workspace-tasks`). Unchecked: callers authorize. */
export function createRunTaskConfig(ctx: ServiceContext, checkEndpoint: TaskEndpointCheck = ctx.taskEndpointCheck ?? refuseUnverifiable(ctx)) {
  const s = ctx.storage;
  const seal = (id: string, key: string | null): string | null => (key === null ? null : ctx.keyring.seal(key, hmacKeyBinding(id)));
  /** The stored key in plaintext; `undefined` when this keyring cannot open it. */
  const open = (row: RunTaskRecord): string | null | undefined => {
    try {
      return row.hmacKey === null ? null : ctx.keyring.open(row.hmacKey, hmacKeyBinding(row.id));
    } catch {
      return undefined;
    }
  };
  /**
   * decision D15: the endpoint a PATCH would leave, when its URL or key differs from the stored
   * one (so it must answer the verification request first); null when neither changes.
   */
  const changedEndpoint = (current: RunTaskRecord, url: string | undefined, key: string | null | undefined): TaskEndpoint | null => {
    const sameUrl = url === undefined || url === current.url;
    if (sameUrl && key === undefined) return null;
    const stored = open(current);
    if (key !== undefined) return sameUrl && key === stored ? null : { organization: current.organization, url: url ?? current.url, hmacKey: key };
    if (stored === undefined) throw invalid(`${ATTRIBUTES}/hmac-key`, "The stored HMAC key cannot be opened with the current keyring; send hmac-key with the new URL");
    return { organization: current.organization, url: url!, hmacKey: stored };
  };

  const requireWorkspace = async (workspaceId: string): Promise<Workspace> => {
    const workspace = await s.workspaces.get(workspaceId);
    if (!workspace) throw notFound();
    return workspace;
  };
  const ownTask = async (workspace: Workspace, id: string): Promise<WorkspaceTaskRecord> => {
    const row = await s.workspaceTasks.get(id);
    if (!row || row.workspaceId !== workspace.id) throw notFound();
    return row;
  };
  const taskOfOrganization = async (organization: string, taskId: unknown): Promise<RunTaskRecord> => {
    const task = typeof taskId === "string" && taskId !== "" ? await s.runTasks.get(taskId) : null;
    if (!task || task.organization !== organization) {
      throw invalid("/data/relationships/task/data/id", "Task must be a run task of the workspace's organization");
    }
    return task;
  };

  const tasks = {
    async list(organization: string, page?: PageRequest): Promise<Page<TaskView>> {
      if (!(await s.organizations.get(organization))) throw notFound();
      const result = await s.runTasks.list(organization, page);
      return { items: result.items.map(toTaskView), total: result.total };
    },
    async get(id: string): Promise<TaskView> {
      const row = await s.runTasks.get(id);
      if (!row) throw notFound();
      return toTaskView(row);
    },
    /**
     * Creates a run task once its endpoint answered the verification request (D15). `options.id`
     * lets the host's own code give the task a fixed id (the reference server's `task-demo`); the
     * HTTP API never passes it. An id that exists already is 409 `conflict`.
     */
    async create(organization: string, input: TaskCreate, options: { id?: string } = {}): Promise<TaskView> {
      if (!(await s.organizations.get(organization))) throw notFound();
      const attrs = parseOrThrow(TaskCreateSchema, input, ATTRIBUTES);
      const globalConfiguration = mergeGlobalConfiguration(DEFAULT_GLOBAL_CONFIGURATION, attrs["global-configuration"]);
      if (options.id !== undefined) {
        if (options.id === "") throw new TypeError("tasks.create: options.id must be a non-empty string");
        if (await s.runTasks.get(options.id)) throw conflict(`run task ${quote(options.id)} already exists`);
      }
      await checkEndpoint({ organization, url: attrs.url, hmacKey: attrs["hmac-key"] }, `${ATTRIBUTES}/url`);
      const id = options.id ?? ctx.newId("task");
      const now = isoNow(ctx);
      const record: RunTaskRecord = {
        id,
        organization,
        name: attrs.name,
        url: attrs.url,
        description: attrs.description,
        category: attrs.category,
        enabled: attrs.enabled,
        hmacKey: seal(id, attrs["hmac-key"]),
        globalConfiguration,
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      if (!(await s.runTasks.insert(record)).ok) throw DUPLICATE_NAME();
      return toTaskView(record);
    },
    async update(id: string, input: TaskUpdate): Promise<TaskView> {
      const attrs = parseOrThrow(TaskUpdateSchema, input, ATTRIBUTES);
      let verified: TaskEndpoint | null = null;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await s.runTasks.get(id);
        if (!current) throw notFound();
        await ctx.keys.holdKeysOf([current.hmacKey]);
        const key = attrs["hmac-key"];
        // decision D15: a new URL or key is saved only once the endpoint answered the verification.
        const endpoint = changedEndpoint(current, attrs.url, key);
        if (endpoint && !(verified && verified.url === endpoint.url && verified.hmacKey === endpoint.hmacKey)) {
          await checkEndpoint(endpoint, `${ATTRIBUTES}/${endpoint.url !== current.url ? "url" : "hmac-key"}`);
          verified = endpoint;
        }
        const next: RunTaskRecord = {
          ...current,
          name: attrs.name ?? current.name,
          url: attrs.url ?? current.url,
          description: attrs.description === undefined ? current.description : attrs.description,
          category: attrs.category ?? current.category,
          enabled: attrs.enabled ?? current.enabled,
          hmacKey: key === undefined ? current.hmacKey : seal(id, key),
          globalConfiguration: mergeGlobalConfiguration(current.globalConfiguration, attrs["global-configuration"]),
          version: current.version + 1,
          updatedAt: isoNow(ctx),
        };
        const result = await s.runTasks.update(next, current.version);
        if (result.ok) return toTaskView(next);
        if (result.reason === "duplicate-name") throw DUPLICATE_NAME();
        if (result.reason === "missing") throw notFound();
      }
      throw BUSY();
    },
    /** Deletes the task and its workspace attachments; runs already created keep their snapshots. */
    async delete(id: string): Promise<void> {
      if (!(await s.runTasks.delete(id))) throw notFound();
    },
  };

  const workspaceTasks = {
    async list(workspaceId: string, page?: PageRequest): Promise<Page<WorkspaceTaskView>> {
      await requireWorkspace(workspaceId);
      const result = await s.workspaceTasks.list(workspaceId, page);
      return { items: result.items.map(toWorkspaceTaskView), total: result.total };
    },
    async get(workspaceId: string, id: string): Promise<WorkspaceTaskView> {
      return toWorkspaceTaskView(await ownTask(await requireWorkspace(workspaceId), id));
    },
    /** Every attachment of one run task, across its organization's workspaces (the task's `workspace-tasks`). */
    async ofTask(taskId: string): Promise<WorkspaceTaskView[]> {
      return (await s.workspaceTasks.listByTask(taskId)).map(toWorkspaceTaskView);
    },
    async create(workspaceId: string, taskId: string, input: WorkspaceTaskCreate): Promise<WorkspaceTaskView> {
      const workspace = await requireWorkspace(workspaceId);
      const attrs = parseOrThrow(WorkspaceTaskCreateSchema, input, ATTRIBUTES);
      const task = await taskOfOrganization(workspace.organization, taskId);
      const stages = attrs.stages ?? [attrs.stage ?? "post_plan"];
      checkStages(stages, attrs["enforcement-level"]);
      const now = isoNow(ctx);
      const record: WorkspaceTaskRecord = {
        id: ctx.newId("wstask"),
        workspaceId: workspace.id,
        organization: workspace.organization,
        taskId: task.id,
        enforcementLevel: attrs["enforcement-level"],
        stages,
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      const result = await s.workspaceTasks.insert(record);
      if (!result.ok && result.reason === "duplicate-task") {
        throw invalid("/data/relationships/task/data/id", "Task has already been added to this workspace");
      }
      if (!result.ok) await taskOfOrganization(workspace.organization, null);
      return toWorkspaceTaskView(record);
    },
    async update(workspaceId: string, id: string, input: WorkspaceTaskUpdate): Promise<WorkspaceTaskView> {
      const workspace = await requireWorkspace(workspaceId);
      const attrs = parseOrThrow(WorkspaceTaskUpdateSchema, input, ATTRIBUTES);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await ownTask(workspace, id);
        const next: WorkspaceTaskRecord = {
          ...current,
          enforcementLevel: attrs["enforcement-level"] ?? current.enforcementLevel,
          stages: attrs.stages ?? (attrs.stage ? [attrs.stage] : current.stages),
          version: current.version + 1,
          updatedAt: isoNow(ctx),
        };
        checkStages(next.stages, next.enforcementLevel);
        const result = await s.workspaceTasks.update(next, current.version);
        if (result.ok) return toWorkspaceTaskView(next);
        if (result.reason === "missing") throw notFound();
      }
      throw BUSY();
    },
    async delete(workspaceId: string, id: string): Promise<void> {
      const workspace = await requireWorkspace(workspaceId);
      await ownTask(workspace, id);
      if (!(await s.workspaceTasks.delete(id))) throw notFound();
    },
  };

  return { tasks, workspaceTasks };
}
export type RunTaskConfig = ReturnType<typeof createRunTaskConfig>;
