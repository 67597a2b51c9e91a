import { ApiError, conflict, invalid, notFound, quote } from "../errors.js";
import { audited, changesOf } from "./audit.js";
import type { Page, PageRequest } from "../schemas/records.js";
import { DEFAULT_GLOBAL_CONFIGURATION, type RunTaskRecord } from "../schemas/run-task-records.js";
import { TaskCreateSchema, TaskUpdateSchema, type TaskCreate, type TaskUpdate, type TaskView } from "../schemas/run-task-config.js";
import { ATTRIBUTES, BUSY, MAX_ATTEMPTS } from "./config-writes.js";
import { isoNow, type ServiceContext } from "./context.js";
import { mergeGlobalConfiguration, toTaskView, toWorkspaceTaskView } from "./run-task-views.js";
import { createTaskAgentPools, type AgentPoolChoice } from "./task-agent-pools.js";
import type { TaskEndpoint, TaskEndpointCheck } from "./task-endpoint.js";
import { createTaskKeys } from "./task-keys.js";
import { parseOrThrow } from "./validate.js";
import { createWorkspaceTaskConfig } from "./workspace-task-config.js";

export { toTaskView, toWorkspaceTaskView };
export { hmacKeyBinding } from "./task-keys.js";
export type { TaskEndpoint, TaskEndpointCheck } from "./task-endpoint.js";
export type { AgentPoolChoice } from "./task-agent-pools.js";

/** What a create may add to the attributes: a fixed id (the host's code only) and the agent pool (D34). */
export interface TaskCreateOptions {
  id?: string;
  /** The agent pool of the organization whose agents carry the task's requests; null or absent: none. */
  agentPoolId?: string | null;
}

/** decision D34: an update's agent pool: absent keeps it, null removes it, an id names another. */
export interface TaskUpdateOptions {
  agentPoolId?: AgentPoolChoice;
}

const DUPLICATE_NAME = (): ApiError => invalid(`${ATTRIBUTES}/name`, "Name has already been taken");

/** Without a wired check nothing can be verified, so nothing is saved (fail closed). */
const refuseUnverifiable = (ctx: ServiceContext): TaskEndpointCheck => async () => {
  ctx.logger.error("run task endpoint check is not configured; refusing to save a run task URL");
  throw new ApiError("internal");
};

type Created = Pick<RunTaskRecord, "hmacKey" | "globalConfiguration" | "agentPoolId">;

/** A new run task's record: version 1, its HMAC key already sealed. */
function newTask(id: string, organization: string, attrs: ReturnType<typeof TaskCreateSchema.parse>, made: Created, now: string): RunTaskRecord {
  return {
    id,
    organization,
    name: attrs.name,
    url: attrs.url,
    description: attrs.description,
    category: attrs.category,
    enabled: attrs.enabled,
    hmacKey: made.hmacKey,
    globalConfiguration: made.globalConfiguration,
    agentPoolId: made.agentPoolId ?? null,
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/** `current` with the attributes a PATCH sent (absent ones kept), its agent pool, the next version. */
function updatedTask(current: RunTaskRecord, attrs: ReturnType<typeof TaskUpdateSchema.parse>, hmacKey: string | null, agentPoolId: string | null, now: string): RunTaskRecord {
  return {
    ...current,
    name: attrs.name ?? current.name,
    url: attrs.url ?? current.url,
    description: attrs.description === undefined ? current.description : attrs.description,
    category: attrs.category ?? current.category,
    enabled: attrs.enabled ?? current.enabled,
    hmacKey,
    globalConfiguration: mergeGlobalConfiguration(current.globalConfiguration, attrs["global-configuration"]),
    agentPoolId,
    version: current.version + 1,
    updatedAt: now,
  };
}

/** decision D53: what a run task event names; the HMAC key only as "value changed". */
const TASK_FIELDS = ["name", "url", "description", "category", "enabled", "hmacKey", "globalConfiguration", "agentPoolId"] as const;
const taskDraft = (record: RunTaskRecord, action: string, before: RunTaskRecord | null, after: RunTaskRecord | null) => ({
  organization: record.organization,
  resource: { type: "task", id: record.id },
  action,
  changes: changesOf(before, after, TASK_FIELDS, ["hmacKey"]),
});

/** Organization run tasks and workspace run tasks (type `tasks`, `workspace-tasks`). Unchecked: callers authorize. */
export function createRunTaskConfig(ctx: ServiceContext, checkEndpoint: TaskEndpointCheck = ctx.taskEndpointCheck ?? refuseUnverifiable(ctx)) {
  const s = ctx.storage;
  const keys = createTaskKeys(ctx);
  const pools = createTaskAgentPools(ctx, checkEndpoint);

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
     * Creates a run task once its endpoint answered the verification request (D15), sent through
     * an agent of `options.agentPoolId` when the task names one (D34). `options.id` lets the host's
     * own code give the task a fixed id (the reference server's `task-demo`); the HTTP API never
     * passes it. An id that exists already is 409 `conflict`.
     */
    async create(organization: string, input: TaskCreate, options: TaskCreateOptions = {}): Promise<TaskView> {
      if (!(await s.organizations.get(organization))) throw notFound();
      const attrs = parseOrThrow(TaskCreateSchema, input, ATTRIBUTES);
      const globalConfiguration = mergeGlobalConfiguration(DEFAULT_GLOBAL_CONFIGURATION, attrs["global-configuration"]);
      if (options.id !== undefined) {
        if (options.id === "") throw new TypeError("tasks.create: options.id must be a non-empty string");
        if (await s.runTasks.get(options.id)) throw conflict(`run task ${quote(options.id)} already exists`);
      }
      const pool = await pools.after(organization, null, options.agentPoolId);
      await pools.verify(pool, { organization, url: attrs.url, hmacKey: attrs["hmac-key"] }, `${ATTRIBUTES}/url`);
      const id = options.id ?? ctx.newId("task");
      const made = { hmacKey: keys.sealFor(id, attrs["hmac-key"]), globalConfiguration, agentPoolId: pool?.id ?? null };
      const record = newTask(id, organization, attrs, made, isoNow(ctx));
      if (!(await audited(ctx, taskDraft(record, "create", null, record), () => s.runTasks.insert(record))).ok) throw DUPLICATE_NAME();
      return toTaskView(record);
    },
    async update(id: string, input: TaskUpdate, options: TaskUpdateOptions = {}): Promise<TaskView> {
      const attrs = parseOrThrow(TaskUpdateSchema, input, ATTRIBUTES);
      let verified: (TaskEndpoint & { pool: string | null }) | null = null;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await s.runTasks.get(id);
        if (!current) throw notFound();
        await ctx.keys.holdKeysOf([current.hmacKey]);
        const key = attrs["hmac-key"];
        const pool = await pools.after(current.organization, current.agentPoolId ?? null, options.agentPoolId);
        const poolId = pool?.id ?? null;
        // decision D15: a new URL, key or way (D34) is saved only once the endpoint answered the verification.
        const endpoint = keys.changedEndpoint(current, attrs.url, key, poolId !== (current.agentPoolId ?? null));
        if (endpoint && !(verified && verified.url === endpoint.url && verified.hmacKey === endpoint.hmacKey && verified.pool === poolId)) {
          await pools.verify(pool, endpoint, `${ATTRIBUTES}/${key !== undefined && endpoint.url === current.url ? "hmac-key" : "url"}`);
          verified = { ...endpoint, pool: poolId };
        }
        const next = updatedTask(current, attrs, key === undefined ? current.hmacKey : keys.sealFor(id, key), poolId, isoNow(ctx));
        const result = await audited(ctx, taskDraft(next, "update", current, next), () => s.runTasks.update(next, current.version));
        if (result.ok) return toTaskView(next);
        if (result.reason === "duplicate-name") throw DUPLICATE_NAME();
        if (result.reason === "missing") throw notFound();
      }
      throw BUSY();
    },
    /** Deletes the task and its workspace attachments; runs already created keep their snapshots. */
    async delete(id: string): Promise<void> {
      const current = await s.runTasks.get(id);
      if (!current || !(await audited(ctx, taskDraft(current, "destroy", current, null), () => s.runTasks.delete(id)))) throw notFound();
    },
  };

  return { tasks, workspaceTasks: createWorkspaceTaskConfig(ctx) };
}
export type RunTaskConfig = ReturnType<typeof createRunTaskConfig>;
