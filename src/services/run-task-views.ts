import { invalid } from "../errors.js";
import type * as z from "zod";
import type { GlobalConfiguration, RunTaskRecord, WorkspaceTaskRecord } from "../schemas/run-task-records.js";
import type { GlobalConfigurationSchema, TaskView, WorkspaceTaskView } from "../schemas/run-task-config.js";
import type { EnforcementLevel, RunStage } from "../schemas/run-tasks.js";

/** Views of run task records and the rules their stages follow, shared by create and update. */

const ATTRIBUTES = "/data/attributes";

export const toTaskView = (r: RunTaskRecord): TaskView => ({
  id: r.id,
  organization: r.organization,
  name: r.name,
  url: r.url,
  description: r.description,
  category: r.category,
  enabled: r.enabled,
  hasHmacKey: r.hmacKey !== null,
  globalConfiguration: { ...r.globalConfiguration, stages: [...r.globalConfiguration.stages] },
  agentPoolId: r.agentPoolId ?? null,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export const toWorkspaceTaskView = (r: WorkspaceTaskRecord): WorkspaceTaskView => ({
  id: r.id,
  workspaceId: r.workspaceId,
  organization: r.organization,
  taskId: r.taskId,
  enforcementLevel: r.enforcementLevel,
  stages: r.stages,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

/** post_apply cannot halt a run, so only advisory tasks may run there (reference 4.6). */
export function checkStages(stages: readonly RunStage[], level: EnforcementLevel, pointer = `${ATTRIBUTES}/stages`): void {
  if (level === "mandatory" && stages.includes("post_apply")) {
    throw invalid(pointer, "Stages can include post_apply only for advisory tasks");
  }
}

const GLOBAL = `${ATTRIBUTES}/global-configuration`;

/**
 * The members sent replace the stored ones; the result must hold on its own: an enabled global
 * configuration names at least one stage, and the post_apply rule of workspace tasks applies.
 */
export function mergeGlobalConfiguration(current: GlobalConfiguration, sent: z.output<typeof GlobalConfigurationSchema> | undefined): GlobalConfiguration {
  if (sent === undefined) return current;
  const next: GlobalConfiguration = {
    enabled: sent.enabled ?? current.enabled,
    stages: sent.stages ?? current.stages,
    enforcementLevel: sent["enforcement-level"] ?? current.enforcementLevel,
  };
  if (next.enabled && next.stages.length === 0) throw invalid(`${GLOBAL}/stages`, "Stages can't be empty while enabled");
  checkStages(next.stages, next.enforcementLevel, `${GLOBAL}/stages`);
  return next;
}
