import type { RunRecord } from "../schemas/run-task-records.js";

/** The run an artifact provider is asked about (decision D24): the host's run as runplane keeps it. */
export type ArtifactRun = RunRecord;

/**
 * What a provider may return: a JSON value (serialized here), a string, bytes, a Web stream, a Node
 * stream (any async iterable of bytes) or a ready `Response`. `null`/`undefined`: no such artifact.
 */
export type ArtifactBody =
  | Record<string, unknown>
  | unknown[]
  | string
  | Uint8Array
  | ArrayBuffer
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string>
  | Response
  | null
  | undefined;

export type ArtifactProvider = (run: ArtifactRun) => ArtifactBody | Promise<ArtifactBody>;

/** Host providers of what integrations download and read (decision D24). */
export interface ArtifactProviders {
  /** The run's plan as `terraform show -json` writes it; served as `application/json`. */
  planJson?: ArtifactProvider;
  /** The run's configuration version as a `.tar.gz`; served as `application/octet-stream`. */
  configurationVersion?: ArtifactProvider;
  /** The plan's log (`log-read-url` of the plan, D32); served as `text/plain`. */
  planLog?: ArtifactProvider;
  /** The apply's log (`log-read-url` of the apply, D32); served as `text/plain`. */
  applyLog?: ArtifactProvider;
}

export type ArtifactKind = keyof ArtifactProviders;

/** decision D24: plan JSON is `application/json`; a configuration version is `application/octet-stream`; logs are text. */
export const ARTIFACT_CONTENT_TYPES = {
  planJson: "application/json",
  configurationVersion: "application/octet-stream",
  planLog: "text/plain; charset=utf-8",
  applyLog: "text/plain; charset=utf-8",
} as const satisfies Record<ArtifactKind, string>;

const isAsyncIterable = (v: object): v is AsyncIterable<Uint8Array | string> => Symbol.asyncIterator in v;

/** A Node stream (or any async iterable) as a Web stream; strings become UTF-8 bytes. */
function iterableStream(source: AsyncIterable<Uint8Array | string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(typeof next.value === "string" ? encoder.encode(next.value) : new Uint8Array(next.value));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/**
 * One provider answer as the response body, or null when there is nothing to serve. A provider's
 * own `Response` is passed on only when it is a 2xx (its error pages are the host's business, not
 * the integration's), its body and headers kept but the content type set to the artifact's (D24):
 * a `new Response(string)` would otherwise say `text/plain`.
 */
export function toArtifactResponse(body: ArtifactBody, kind: ArtifactKind): Response | null {
  const contentType = ARTIFACT_CONTENT_TYPES[kind];
  if (body === null || body === undefined) return null;
  const headers = { "content-type": contentType, "cache-control": "no-store" };
  if (body instanceof Response) {
    if (!body.ok) return null;
    const merged = new Headers(body.headers);
    merged.set("content-type", contentType);
    merged.set("cache-control", "no-store");
    return new Response(body.body, { status: 200, headers: merged });
  }
  if (typeof body === "string" || body instanceof Uint8Array || body instanceof ArrayBuffer || body instanceof ReadableStream) {
    return new Response(body as BodyInit, { status: 200, headers });
  }
  if (!Array.isArray(body) && isAsyncIterable(body)) return new Response(iterableStream(body), { status: 200, headers });
  return new Response(JSON.stringify(body), { status: 200, headers });
}

/**
 * The bytes `[offset, offset + limit)` of an artifact response (to the end without `limit`), as go-tfe's
 * log reader asks for them: it reads a log in chunks by `?limit=&offset=` and stops at
 * an empty one. Read as a stream, so a large log is never held whole; the rest is cancelled.
 */
export function sliceBody(response: Response, offset: number, limit: number | undefined): Response {
  const source = response.body;
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  if (!source || (offset === 0 && limit === undefined)) return new Response(source, { status: response.status, headers });
  const reader = source.getReader();
  let skip = offset;
  let left = limit ?? Infinity;
  const sliced = new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (left > 0) {
        const next = await reader.read();
        if (next.done) break;
        let chunk = next.value;
        if (skip >= chunk.byteLength) {
          skip -= chunk.byteLength;
          continue;
        }
        chunk = chunk.subarray(skip, skip + Math.min(left, chunk.byteLength - skip));
        skip = 0;
        left -= chunk.byteLength;
        controller.enqueue(chunk);
        return;
      }
      controller.close();
      await reader.cancel().catch(() => undefined);
    },
    async cancel() {
      await reader.cancel().catch(() => undefined);
    },
  });
  return new Response(sliced, { status: response.status, headers });
}
