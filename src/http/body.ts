import { ApiError, badRequest } from "../errors.js";

/** decision D6: request bodies must be JSON:API or plain JSON. */
const ACCEPTED_MEDIA_TYPES = new Set(["application/vnd.api+json", "application/json"]);
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * The body stream failed before its end: the client aborted its upload (or the connection broke).
 * Answered 400 (if anyone still listens) and logged at debug: it is the client's doing, not ours.
 */
export class BodyAbortedError extends ApiError {
  constructor() {
    super("bad-request", { detail: "The request body was not received completely" });
  }
}

/**
 * The rest of the body is never read, so the connection cannot carry another request: the answer
 * says it closes (a client that reused it got ECONNRESET on its next request, found from outside).
 */
const tooLarge = (limit: number): ApiError =>
  new ApiError("payload-too-large", { detail: `Request body exceeds the limit of ${limit} bytes` }, { connection: "close" });

/**
 * Reads and parses a JSON request body (decision D6): 415 for another media type, 413 past `limit`
 * without buffering beyond it, 400 for malformed JSON. An absent/empty body resolves `undefined`.
 */
export async function readJsonBody(request: Request, limit: number = DEFAULT_BODY_LIMIT, relayed = false): Promise<unknown> {
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
  checkStructure(parsed, relayed);
  return parsed;
}

/** decision D26: how deep a body may nest; deeper is 400. */
export const MAX_BODY_DEPTH = 64;
const LONE_SURROGATE = /\p{Cs}/u;
/** Found from outside: PostgreSQL's text cannot hold U+0000, and no field of the API needs it. */
const NUL = "\u0000";

/** 400 for a text no storage can keep as it was sent: a lone surrogate, a NUL (unless `relayed`). */
function checkText(text: string, relayed: boolean): void {
  if (LONE_SURROGATE.test(text)) throw badRequest("The request body contains a lone UTF-16 surrogate");
  if (!relayed && text.includes(NUL)) throw badRequest("The request body contains a NUL character (U+0000), which no text value may hold");
}

/**
 * Walks the parsed body without recursion (a 6 KB body of `[` nests 3,000 levels): 400 past
 * MAX_BODY_DEPTH, and 400 for a lone surrogate, which a `\ud800` escape parses into and storage
 * cannot keep byte-for-byte, or a NUL, in a value or a key. `relayed`: the body carries what
 * someone else sent (an agent's report of an integration's answer, whose excerpt drops control
 * characters), so a NUL in it is no reason to refuse the report.
 */
function checkStructure(body: unknown, relayed: boolean): void {
  const stack: [unknown, number][] = [[body, 0]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [value, depth] = item;
    if (typeof value === "string") {
      checkText(value, relayed);
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_BODY_DEPTH) throw badRequest(`The request body is nested deeper than ${MAX_BODY_DEPTH} levels`);
    const entries = Array.isArray(value) ? value.map((v) => ["", v] as const) : Object.entries(value);
    for (const [key, v] of entries) {
      checkText(key, relayed);
      stack.push([v, depth + 1]);
    }
  }
}

async function readLimited(stream: ReadableStream<Uint8Array>, limit: number): Promise<string> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch {
        throw new BodyAbortedError();
      }
      const { done, value } = chunk;
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
  try {
    return UTF8.decode(Buffer.concat(chunks));
  } catch {
    throw badRequest("The request body is not valid UTF-8");
  }
}

/** Strict: bytes that are not UTF-8 are refused, not stored as replacement characters. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });
