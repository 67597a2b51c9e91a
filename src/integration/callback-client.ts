import type { RunTaskRequest } from "../schemas/run-tasks.js";
import { buildCallbackDocument, type CallbackUpdate } from "./callback-body.js";
import { CallbackError, CallbackValidationError, JsonApiErrorDocumentSchema, type JsonApiError } from "./errors.js";

/**
 * The one call the client makes: always a URL string and an init with a string body, so a global
 * `fetch`, undici's, or `(input, init) => runplane.handler(new Request(input, init))` all fit.
 */
export type CallbackFetch = (input: string, init: RequestInit) => Promise<Response>;

export interface CallbackClientOptions {
  /** Default: the global `fetch`, looked up at each call. */
  fetch?: CallbackFetch;
}

/** The parts of the run task request a callback needs. */
export type CallbackTarget = Pick<RunTaskRequest, "access_token" | "capabilities" | "task_result_callback_url">;

export interface SendOptions {
  signal?: AbortSignal;
}

export interface CallbackClient {
  /**
   * PATCHes `update` to the request's callback URL with its access token (spec 4.2). Resolves with
   * the HTTP status of a 2xx answer. Throws `CallbackValidationError` before sending when the update
   * breaks a limit, and `CallbackError` for a non-2xx answer; network errors from `fetch` propagate.
   */
  send(request: CallbackTarget, update: CallbackUpdate, options?: SendOptions): Promise<{ status: number }>;
}

const MEDIA_TYPE = "application/vnd.api+json";

/** Creates the client an integration uses to report its result (spec 4.2, decision D17). */
export function createCallbackClient(options: CallbackClientOptions = {}): CallbackClient {
  const doFetch: CallbackFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return {
    async send(request, update, sendOptions = {}) {
      const built = buildCallbackDocument(update, request.capabilities);
      if (!built.ok) throw new CallbackValidationError(built.issues);
      const response = await doFetch(request.task_result_callback_url, {
        method: "PATCH",
        headers: { Authorization: `Bearer ${request.access_token}`, "Content-Type": MEDIA_TYPE, Accept: MEDIA_TYPE },
        body: JSON.stringify(built.document),
        // The URL is used verbatim (reference 2.2); the bearer token must not follow a redirect.
        redirect: "manual",
        ...(sendOptions.signal === undefined ? {} : { signal: sendOptions.signal }),
      });
      if (response.ok) {
        // The service's body (empty, or the result document) is not needed; release the connection.
        await response.body?.cancel().catch(() => {});
        return { status: response.status };
      }
      throw new CallbackError(response.status, await errorsOf(response));
    },
  };
}

async function errorsOf(response: Response): Promise<JsonApiError[]> {
  try {
    const parsed = JsonApiErrorDocumentSchema.safeParse(JSON.parse(await response.text()));
    return parsed.success ? parsed.data.errors : [];
  } catch {
    return [];
  }
}
