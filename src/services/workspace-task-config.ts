import { invalid, notFound } from "../errors.js";
import { audited, changesOf } from "./audit.js";
import type { Workspace } from "../schemas/directory.js";
import type { Page, PageRequest } from "../schemas/records.js";
import type { RunTaskRecord, WorkspaceTaskRecord } from "../schemas/run-task-records.js";
import {
  WorkspaceTaskCreateSchema,
  WorkspaceTaskUpdateSchema,
  type WorkspaceTaskCreate,
  type WorkspaceTaskUpdate,
  type WorkspaceTaskView,
} from "../schemas/run-task-config.js";
import type { Storage } from "../storage/types.js";
import { ATTRIBUTES, BUSY, MAX_ATTEMPTS } from "./config-writes.js";
import { isoNow, type ServiceContext } from "./context.js";
import { checkStages, toWorkspaceTaskView } from "./run-task-views.js";
import { parseOrThrow } from "./validate.js";

async function requireWorkspace(s: Storage, workspaceId: string): Promise<Workspace> {
  const workspace = await s.workspaces.get(workspaceId);
  if (!workspace) throw notFound();
  return workspace;
}
async function ownTask(s: Storage, workspace: Workspace, id: string): Promise<WorkspaceTaskRecord> {
  const row = await s.workspaceTasks.get(id);
  if (!row || row.workspaceId !== workspace.id) throw notFound();
  return row;
}
async function taskOfOrganization(s: Storage, organization: string, taskId: unknown): Promise<RunTaskRecord> {
  const task = typeof taskId === "string" && taskId !== "" ? await s.runTasks.get(taskId) : null;
  if (!task || task.organization !== organization) {
    throw invalid("/data/relationships/task/data/id", "Task must be a run task of the workspace's organization");
  }
  return task;
}

/** decision D53: what a workspace's run task attachment event names. */
const ATTACHMENT_FIELDS = ["workspaceId", "taskId", "enforcementLevel", "stages"] as const;
const attachmentDraft = (record: WorkspaceTaskRecord, action: string, before: WorkspaceTaskRecord | null, after: WorkspaceTaskRecord | null) => ({
  organization: record.organization,
  resource: { type: "workspace-task", id: record.id },
  action,
  changes: changesOf(before, after, ATTACHMENT_FIELDS),
});

/** Workspace run tasks (type `workspace-tasks`): a run task attached to a workspace's stages. Unchecked: callers authorize. */
export function createWorkspaceTaskConfig(ctx: ServiceContext) {
  const s = ctx.storage;
  return {
    async list(workspaceId: string, page?: PageRequest): Promise<Page<WorkspaceTaskView>> {
      await requireWorkspace(s, workspaceId);
      const result = await s.workspaceTasks.list(workspaceId, page);
      return { items: result.items.map(toWorkspaceTaskView), total: result.total };
    },
    async get(workspaceId: string, id: string): Promise<WorkspaceTaskView> {
      return toWorkspaceTaskView(await ownTask(s, await requireWorkspace(s, workspaceId), id));
    },
    /** Every attachment of one run task, across its organization's workspaces (the task's `workspace-tasks`). */
    async ofTask(taskId: string): Promise<WorkspaceTaskView[]> {
      return (await s.workspaceTasks.listByTask(taskId)).map(toWorkspaceTaskView);
    },
    async create(workspaceId: string, taskId: string, input: WorkspaceTaskCreate): Promise<WorkspaceTaskView> {
      const workspace = await requireWorkspace(s, workspaceId);
      const attrs = parseOrThrow(WorkspaceTaskCreateSchema, input, ATTRIBUTES);
      const task = await taskOfOrganization(s, workspace.organization, taskId);
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
      const result = await audited(ctx, attachmentDraft(record, "create", null, record), () => s.workspaceTasks.insert(record));
      if (!result.ok && result.reason === "duplicate-task") {
        throw invalid("/data/relationships/task/data/id", "Task has already been added to this workspace");
      }
      if (!result.ok) await taskOfOrganization(s, workspace.organization, null);
      return toWorkspaceTaskView(record);
    },
    async update(workspaceId: string, id: string, input: WorkspaceTaskUpdate): Promise<WorkspaceTaskView> {
      const workspace = await requireWorkspace(s, workspaceId);
      const attrs = parseOrThrow(WorkspaceTaskUpdateSchema, input, ATTRIBUTES);
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const current = await ownTask(s, workspace, id);
        const next: WorkspaceTaskRecord = {
          ...current,
          enforcementLevel: attrs["enforcement-level"] ?? current.enforcementLevel,
          stages: attrs.stages ?? (attrs.stage ? [attrs.stage] : current.stages),
          version: current.version + 1,
          updatedAt: isoNow(ctx),
        };
        checkStages(next.stages, next.enforcementLevel);
        const result = await audited(ctx, attachmentDraft(next, "update", current, next), () => s.workspaceTasks.update(next, current.version));
        if (result.ok) return toWorkspaceTaskView(next);
        if (result.reason === "missing") throw notFound();
      }
      throw BUSY();
    },
    async delete(workspaceId: string, id: string): Promise<void> {
      const workspace = await requireWorkspace(s, workspaceId);
      const current = await ownTask(s, workspace, id);
      if (!(await audited(ctx, attachmentDraft(current, "destroy", current, null), () => s.workspaceTasks.delete(id)))) throw notFound();
    },
  };
}
