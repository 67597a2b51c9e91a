import type { RunTaskRequest } from "../schemas/run-tasks.js";
import type { ValidationIssue } from "./issues.js";
import { decodeBody, parseRunTaskRequest, VERIFICATION_ACCESS_TOKEN } from "./request.js";
import { signatureFromHeaders, verifyRunTaskSignature } from "./signature.js";

export interface RunTaskHandlerOptions {
  /** The run task's HMAC key; without one only unsigned requests (empty header) are accepted. */
  hmacKey: string | null | undefined;
  /** Runs after the 200 has been returned; report the result with a callback client. */
  onRequest: (request: RunTaskRequest) => void | Promise<void>;
  /** Receives whatever `onRequest` throws. Default: one line on stderr via `console.error`. */
  onError?: (error: unknown, request: RunTaskRequest) => void;
  /** Larger bodies get 413 before anything else is checked. Default 1 MiB; real requests are a few KiB. */
  maxBodyBytes?: number;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * A Web handler for the run task endpoint (spec 4.1): 405 unless POST, 413 past the size limit,
 * 401 when the signature does not verify, 400 for an invalid payload, otherwise 200 at once.
 * The verification request (`access_token: "test-token"`) is answered 200 and nothing more; any
 * other request is handed to `onRequest` after the response, because the service waits for the
 * 200 and retries when it is slow, while the result itself arrives later by callback.
 */
export function createRunTaskHandler(options: RunTaskHandlerOptions): (request: Request) => Promise<Response> {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const onError = options.onError ?? ((error: unknown) => console.error("run task integration: onRequest failed", error));

  const run = async (request: RunTaskRequest): Promise<void> => {
    try {
      await options.onRequest(request);
    } catch (error) {
      try {
        onError(error, request);
      } catch {
        // A throwing onError must not become an unhandled rejection that ends the process.
      }
    }
  };

  return async (incoming) => {
    if (incoming.method !== "POST") {
      return new Response(null, { status: 405, headers: { Allow: "POST" } });
    }
    const bytes = await readLimited(incoming, limit);
    if (bytes === null) return errorResponse(413, "payload too large", [{ pointer: "", message: `body exceeds ${limit} bytes` }]);
    if (!verifyRunTaskSignature(bytes, signatureFromHeaders(incoming.headers), options.hmacKey)) {
      return errorResponse(401, "unauthorized", [{ pointer: "", message: "run task signature does not verify" }]);
    }
    const decoded = decodeBody(bytes);
    if (!decoded.ok) return errorResponse(400, "bad request", decoded.issues);
    const parsed = parseRunTaskRequest(decoded.value);
    if (parsed.ok) {
      // A macrotask, so the 200 is on its way before any integration work starts.
      if (!parsed.isVerification) setTimeout(() => void run(parsed.request), 0);
      return new Response(null, { status: 200 });
    }
    // The signature already proved the sender; a verification request whose payload differs from
    // spec 4.1 (another service version) must still get its 200, or the run task cannot be saved.
    if (isVerificationShaped(decoded.value)) return new Response(null, { status: 200 });
    return errorResponse(400, "bad request", parsed.issues);
  };
}

const isVerificationShaped = (value: unknown): boolean =>
  typeof value === "object" && value !== null && (value as { access_token?: unknown }).access_token === VERIFICATION_ACCESS_TOKEN;

function errorResponse(status: number, title: string, issues: readonly ValidationIssue[]): Response {
  const errors = issues.map((issue) => ({
    status: String(status),
    title,
    detail: issue.message,
    ...(issue.pointer === "" ? {} : { source: { pointer: issue.pointer } }),
  }));
  return new Response(JSON.stringify({ errors }), { status, headers: { "Content-Type": "application/vnd.api+json" } });
}

/** The raw body, or null past `limit` (read no further than that). */
async function readLimited(request: Request, limit: number): Promise<Uint8Array | null> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > limit) return null;
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
