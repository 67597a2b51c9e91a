/**
 * `runplane/integration`: a kit for writing run task integrations, the other side of runplane's
 * run task requests (spec 4.1) and callbacks (spec 4.2). It works against runplane and against
 * HCP Terraform alike: both signature header names are read (decision D1) and callbacks are sent in
 * go-tfe's wire form.
 *
 * ```ts
 * // Without a key the handler accepts only unsigned requests: refuse to start instead.
 * const hmacKey = process.env.HMAC_KEY;
 * if (!hmacKey) throw new Error("set HMAC_KEY to the run task's HMAC key");
 * const callbacks = createCallbackClient();
 * export const handler = createRunTaskHandler({
 *   hmacKey,
 *   onRequest: async (request) => {
 *     await callbacks.send(request, { status: "running", message: "Checking" });
 *     await callbacks.send(request, { status: "passed", message: "All good" });
 *   },
 * });
 * ```
 */
export type { RunTaskRequest, CallbackStatus, TagLevel } from "../schemas/run-tasks.js";
export { CALLBACK_LIMITS, CALLBACK_STATUSES, TAG_LEVELS } from "../schemas/run-tasks.js";
export type { ValidationIssue } from "./issues.js";
export { parseRunTaskRequest, VERIFICATION_ACCESS_TOKEN, type ParseRunTaskRequestResult } from "./request.js";
export { signatureFromHeaders, verifyRunTaskSignature, type HeaderSource } from "./signature.js";
export {
  buildCallbackDocument,
  type BuildCallbackResult,
  type CallbackDocument,
  type CallbackOutcome,
  type CallbackTag,
  type CallbackUpdate,
} from "./callback-body.js";
export {
  createCallbackClient,
  type CallbackClient,
  type CallbackClientOptions,
  type CallbackFetch,
  type CallbackTarget,
  type SendOptions,
} from "./callback-client.js";
export {
  CallbackError,
  CallbackValidationError,
  isCallbackError,
  isCallbackValidationError,
  type JsonApiError,
} from "./errors.js";
export { createRunTaskHandler, type RunTaskHandlerOptions } from "./handler.js";
