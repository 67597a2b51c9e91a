import { ApiError, conflict, invalid, notFound, quote } from "../errors.js";
import type { Page, PageRequest } from "../schemas/records.js";
import { DEFAULT_GLOBAL_CONFIGURATION, type RunTaskRecord } from "../schemas/run-task-records.js";
import { TaskCreateSchema, TaskUpdateSchema, type TaskCreate, type TaskUpdate, type TaskView } from "../schemas/run-task-config.js";
import { ATTRIBUTES, BUSY, MAX_ATTEMPTS } from "./config-writes.js";
import { isoNow, type ServiceContext } from "./context.js";
import { mergeGlobalConfiguration, toTaskView, toWorkspaceTaskView } from "./run-task-views.js";
import type { TaskEndpoint, TaskEndpointCheck } from "./task-endpoint.js";
import { createTaskKeys } from "./task-keys.js";
import { parseOrThrow } from "./validate.js";
import { createWorkspaceTaskConfig } from "./workspace-task-config.js";

export { toTaskView, toWorkspaceTaskView };
export { hmacKeyBinding } from "./task-keys.js";
export type { TaskEndpoint, TaskEndpointCheck } from "./task-endpoint.js";

const DUPLICATE_NAME = (): ApiError => invalid(`${ATTRIBUTES}/name`, "Name has already been taken");

/** Without a wired check nothing can be verified, so nothing is saved (fail closed). */
const refuseUnverifiable = (ctx: ServiceContext): TaskEndpointCheck => async () => {
  ctx.logger.error("run task endpoint check is not configured; refusing to save a run task URL");
  throw new ApiError("internal");
};

/** A new run task's record: version 1, its HMAC key already sealed. */
function newTask(id: string, organization: string, attrs: ReturnType<typeof TaskCreateSchema.parse>, hmacKey: string | null, globalConfiguration: RunTaskRecord["globalConfiguration"], now: string): RunTaskRecord {
  return {
    id,
    organization,
    name: attrs.name,
    url: attrs.url,
    description: attrs.description,
    category: attrs.category,
    enabled: attrs.enabled,
    hmacKey,
    globalConfiguration,
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/** `current` with the attributes a PATCH sent (absent ones kept), the next version. */
function updatedTask(current: RunTaskRecord, attrs: ReturnType<typeof TaskUpdateSchema.parse>, hmacKey: string | null, now: string): RunTaskRecord {
  return {
    ...current,
    name: attrs.name ?? current.name,
    url: attrs.url ?? current.url,
    description: attrs.description === undefined ? current.description : attrs.description,
    category: attrs.category ?? current.category,
    enabled: attrs.enabled ?? current.enabled,
    hmacKey,
    globalConfiguration: mergeGlobalConfiguration(current.globalConfiguration, attrs["global-configuration"]),
    version: current.version + 1,
    updatedAt: now,
  };
}

/** Organization run tasks and workspace run tasks (type `tasks`, `workspace-tasks`). Unchecked: callers authorize. */
export function createRunTaskConfig(ctx: ServiceContext, checkEndpoint: TaskEndpointCheck = ctx.taskEndpointCheck ?? refuseUnverifiable(ctx)) {
  const s = ctx.storage;
  const keys = createTaskKeys(ctx);

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
      const record = newTask(id, organization, attrs, keys.sealFor(id, attrs["hmac-key"]), globalConfiguration, isoNow(ctx));
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
        const endpoint = keys.changedEndpoint(current, attrs.url, key);
        if (endpoint && !(verified && verified.url === endpoint.url && verified.hmacKey === endpoint.hmacKey)) {
          await checkEndpoint(endpoint, `${ATTRIBUTES}/${endpoint.url !== current.url ? "url" : "hmac-key"}`);
          verified = endpoint;
        }
        const next = updatedTask(current, attrs, key === undefined ? current.hmacKey : keys.sealFor(id, key), isoNow(ctx));
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

  return { tasks, workspaceTasks: createWorkspaceTaskConfig(ctx) };
}
export type RunTaskConfig = ReturnType<typeof createRunTaskConfig>;
