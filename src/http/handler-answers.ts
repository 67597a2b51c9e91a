import { redactLogCapabilities } from "../domain/log-capability.js";
import { ApiError, RETRY_AFTER_SECONDS, toApiError } from "../errors.js";
import { failureFrames } from "../logger.js";
import { isStorageUnavailableError } from "../storage/unavailable.js";
import { BodyAbortedError } from "./body.js";
import { errorDocument, MEDIA_TYPE, type JsonApiDocument } from "./jsonapi.js";
import type { HttpApp } from "./types.js";
import { currentAuditRequest } from "../services/audit-request.js";

/** The handler's own answers: JSON:API bodies, errors as documents, and the headers added last. */

export const jsonText = (status: number, body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}): Response =>
  new Response(body, { status, headers: { "content-type": MEDIA_TYPE, ...headers } });
export const json = (status: number, document: JsonApiDocument, headers: Record<string, string> = {}): Response =>
  jsonText(status, JSON.stringify(document), headers);

/**
 * Any error as its JSON:API answer. A storage that cannot be reached is a 503 with `Retry-After`
 * (D28); anything unexpected is logged (without request contents) and answered with a bare 500 (D5).
 */
export function errorAnswer(app: HttpApp, request: Request, url: URL, error: unknown): Response {
  const apiError = toApiError(error);
  // decision D32: a `log-read-url` path carries its credential; log lines never do.
  const path = redactLogCapabilities(url.pathname);
  // decision D26: a client that gives up on its upload is routine, not a server fault.
  if (error instanceof BodyAbortedError) app.logger.debug("request body aborted", { method: request.method, path });
  if (apiError.code === "unavailable") {
    // decision D28: the storage is away, not broken: a warning, and a 503 the client retries.
    const reason = isStorageUnavailableError(error) ? error.reason : "unavailable";
    // The request id ties the line to the answer's X-Request-Id and the audit trail (found from outside).
    app.logger.warn("storage unavailable", { method: request.method, path, reason, requestId: currentAuditRequest()?.requestId });
    return json(apiError.status, errorDocument(apiError), { "retry-after": String(RETRY_AFTER_SECONDS) });
  }
  if (apiError.status >= 500) {
    app.logger.error("request failed", { method: request.method, path, error: error instanceof Error ? error.name : typeof error, requestId: currentAuditRequest()?.requestId });
    // The stack helps the host's developers; it goes to debug only and never into a response.
    app.logger.debug("request failure detail", { stack: failureFrames(error) });
  }
  return json(apiError.status, errorDocument(apiError), { ...apiError.headers });
}

export const badUrl = (): Response => json(400, errorDocument(new ApiError("bad-request", { detail: "Invalid request URL" })));

/** `response` with `headers` set: on a copy when the route's own Response has immutable headers (one passed on from fetch). */
export function withHeaders(response: Response, headers: Record<string, string>): Response {
  const set = (r: Response): Response => (Object.entries(headers).forEach(([name, value]) => r.headers.set(name, value)), r);
  try {
    return set(response);
  } catch {
    return set(new Response(response.body, response));
  }
}
