import { rowBinding } from "../crypto/keyring.js";
import { buildRunTaskRequest, serializeRunTaskRequest } from "../domain/run-task-request.js";
import type { RunRecord, TaskDeliveryRecord, TaskResultRecord } from "../schemas/run-task-records.js";
import type { ServiceContext } from "./context.js";
import type { RunTaskSettings } from "./run-task-settings.js";

/** decision D11: the outbox payload holds the access token, so it is sealed for its row. */
export const deliveryPayloadBinding = (deliveryId: string): string => rowBinding("task_deliveries", "payload", deliveryId);

/**
 * The outbox row of one result of a starting stage (decision D15): the request payload (spec 4.1,
 * D14) built and serialized once, with the result's fresh access token inside, sealed for the row.
 * Due at once, no attempt yet, no lease; the dispatcher (a later issue) claims it.
 */
export function buildDelivery(
  ctx: ServiceContext,
  settings: RunTaskSettings,
  run: RunRecord,
  result: TaskResultRecord,
  token: string,
  workspace: { id: string; name: string; workingDirectory: string },
  now: Date,
): TaskDeliveryRecord {
  const id = ctx.newId("dlv");
  const payload = buildRunTaskRequest({
    stage: result.stage,
    accessToken: token,
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
    configurationVersion: { id: run.configurationVersionId, downloadable: run.configurationVersionDownloadable },
    workspace,
    vcs: run.vcs,
    taskResult: { id: result.id, enforcementLevel: result.enforcementLevel },
  });
  // decision D14: serialized once; the dispatcher signs and sends exactly these bytes.
  const text = new TextDecoder().decode(serializeRunTaskRequest(payload));
  return {
    id,
    taskResultId: result.id,
    stageId: result.stageId,
    runId: run.id,
    taskId: result.taskId,
    stage: result.stage,
    url: result.taskUrl,
    attempt: 0,
    dueAt: now.toISOString(),
    leaseOwner: null,
    leaseExpiresAt: null,
    fencingToken: 0,
    payload: ctx.keyring.seal(text, deliveryPayloadBinding(id)),
    createdAt: now.toISOString(),
    deliveredAt: null,
  };
}
