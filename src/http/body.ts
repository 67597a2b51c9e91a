import { ApiError, badRequest } from "../errors.js";

/** decision D6: request bodies must be JSON:API or plain JSON. */
const ACCEPTED_MEDIA_TYPES = new Set(["application/vnd.api+json", "application/json"]);
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

const tooLarge = (limit: number): ApiError =>
  new ApiError("payload-too-large", { detail: `Request body exceeds the limit of ${limit} bytes` });

/**
 * Reads and parses a JSON request body (decision D6): 415 for another media type, 413 past `limit`
 * without buffering beyond it, 400 for malformed JSON. An absent/empty body resolves `undefined`.
 */
export async function readJsonBody(request: Request, limit: number = DEFAULT_BODY_LIMIT): Promise<unknown> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  if (request.body === null) return undefined;

  const text = await readLimited(request.body, limit);
  if (text.trim() === "") return undefined;
  const mediaType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (!ACCEPTED_MEDIA_TYPES.has(mediaType)) {
    throw new ApiError("unsupported-media-type", {
      detail: "Request bodies must be application/vnd.api+json or application/json",
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    throw badRequest("The request body is not valid JSON");
  }
  // A `\ud800` escape parses into a lone surrogate, which storage cannot keep byte-for-byte.
  if (hasLoneSurrogate(parsed)) throw badRequest("The request body contains a lone UTF-16 surrogate");
  return parsed;
}

const LONE_SURROGATE = /\p{Cs}/u;

function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) if (LONE_SURROGATE.test(k) || hasLoneSurrogate(v)) return true;
  }
  return false;
}

async function readLimited(stream: ReadableStream<Uint8Array>, limit: number): Promise<string> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge(limit);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks).toString("utf8");
}
