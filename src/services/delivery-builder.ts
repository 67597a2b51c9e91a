import { runTaskRequestTemplate } from "../domain/request-template.js";
import type { RunRecord, TaskDeliveryRecord, TaskResultRecord } from "../schemas/run-task-records.js";
import type { RunStage } from "../schemas/run-tasks.js";
import type { ServiceContext } from "./context.js";
import type { RunTaskSettings } from "./run-task-settings.js";
import { sealedBinding } from "./sealing.js";

/** decision D11: the outbox payload holds the access token, so it is sealed for its row. */
export const deliveryPayloadBinding = (deliveryId: string): string => sealedBinding("task_deliveries.payload", deliveryId);

/**
 * The outbox rows of the results of one starting stage (decision D15): each result's request
 * payload (spec 4.1, D14) serialized once, with its fresh access token inside, sealed for its row;
 * due at once, no attempt yet, no lease; the dispatcher claims them. The stage's request is
 * serialized once and each result's fields spliced in (`runTaskRequestTemplate`), so a stage of
 * many results does not serialize the run again per result.
 * Returns each row with its text, for this process's own first attempt (`createFreshPayloads`).
 */
export function deliveryBuilder(
  ctx: ServiceContext,
  settings: RunTaskSettings,
  run: RunRecord,
  stage: RunStage,
  workspace: { id: string; name: string; workingDirectory: string },
  now: Date,
): (result: TaskResultRecord, token: string) => { row: TaskDeliveryRecord; text: string } {
  const template = runTaskRequestTemplate({
    stage,
    urls: { publicUrl: settings.publicUrl, appUrl: settings.appUrl, basePath: settings.basePath },
    organizationName: run.organization,
    run: {
      id: run.id,
      createdAt: run.createdAt,
      createdBy: run.createdBy,
      message: run.message,
      isSpeculative: run.isSpeculative,
      planId: run.planId,
    },
    // decision D24: no configuration provider, nothing to download.
    configurationVersion: {
      id: run.configurationVersionId,
      downloadable: run.configurationVersionDownloadable && settings.configurationDownloads,
    },
    workspace,
    vcs: run.vcs,
  });
  const at = now.toISOString();
  return (result, token) => {
    const id = ctx.newId("dlv");
    // decision D14: serialized once; the dispatcher signs and sends exactly these bytes.
    const text = template({ accessToken: token, taskResult: { id: result.id, enforcementLevel: result.enforcementLevel } });
    const row: TaskDeliveryRecord = {
      id,
      taskResultId: result.id,
      stageId: result.stageId,
      runId: run.id,
      taskId: result.taskId,
      stage: result.stage,
      url: result.taskUrl,
      attempt: 0,
      dueAt: at,
      leaseOwner: null,
      leaseExpiresAt: null,
      fencingToken: 0,
      payload: ctx.keyring.seal(text, deliveryPayloadBinding(id)),
      createdAt: at,
      deliveredAt: null,
      closedAt: null,
      lastError: null,
      // decision D34: the pool stage start gave the result; its agents carry the row.
      agentPoolId: result.agentPoolId ?? null,
    };
    return { row, text };
  };
}
