import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";

/**
 * A Web-standard handler, as returned by `createRunplane(...).handler`; the second argument is
 * the connection's address (decision D62), which a Web `Request` does not carry.
 */
export type FetchHandler = (request: Request, connection?: { remoteAddress?: string | null }) => Promise<Response>;

/** Express attaches a parsed body here when a body parser ran before the mount. */
type MaybeParsed = IncomingMessage & { body?: unknown; originalUrl?: string };

function bodyOf(req: MaybeParsed): BodyInit | null {
  if (req.method === "GET" || req.method === "HEAD") return null;
  // A body parser (e.g. express.json()) already consumed the stream: rebuild the bytes from its result.
  if (req.body !== undefined && req.readableEnded) {
    if (typeof req.body === "string" || Buffer.isBuffer(req.body)) return req.body as string;
    if (typeof req.body === "object" && req.body !== null && Object.keys(req.body).length > 0) return JSON.stringify(req.body);
    return null;
  }
  return Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>;
}

/** Converts a node:http request into a Web `Request` (also works inside Express, before or after body parsers). */
export function toWebRequest(req: MaybeParsed, signal?: AbortSignal): Request {
  const host = req.headers.host ?? "localhost";
  const protocol = (req.socket as { encrypted?: boolean }).encrypted ? "https" : "http";
  // Throws on a malformed Host header (answered 400 by the listener).
  const origin = new URL(`${protocol}://${host}`).origin;
  const target = req.originalUrl ?? req.url ?? "/";
  // Concatenate rather than resolve: `new URL("//evil.example/x", base)` would read a host from the path.
  const url = new URL(target.startsWith("/") ? `${origin}${target}` : target);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const body = bodyOf(req);
  if (body !== null && typeof body === "string") headers.delete("content-length");
  return new Request(url, { method: req.method ?? "GET", headers, body, ...(signal ? { signal } : {}), ...(body && typeof body !== "string" ? { duplex: "half" } : {}) } as RequestInit);
}

/** Writes a Web `Response` to a node:http response. */
export async function writeWebResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") res.setHeader(name, value);
  });
  // Headers joins repeated values with ", ", which breaks cookies: each Set-Cookie stays its own line.
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  if (response.body === null) {
    res.end();
    return;
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  res.setHeader("content-length", bytes.length);
  res.end(bytes);
}

/**
 * decision D34: an agent's long-poll (`/api/agent/v1/`) learns through its Request's signal that
 * the agent went away, so no job is handed to a dead connection. Only there: a controller per
 * request would cost every other request for nothing.
 */
function waitsLong(req: IncomingMessage, res: ServerResponse): AbortSignal | undefined {
  if (!(req.url ?? "").startsWith("/api/agent/v1/")) return undefined;
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * Mounts a runplane handler on node:http or Express: `http.createServer(toNodeListener(handler))` or
 * `app.use(toNodeListener(handler))` (place it before body parsers; an already-parsed body is tolerated).
 */
export function toNodeListener(handler: FetchHandler) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    let request: Request;
    try {
      request = toWebRequest(req, waitsLong(req, res));
    } catch {
      res.statusCode = 400;
      res.setHeader("content-type", "application/vnd.api+json");
      res.end(JSON.stringify({ errors: [{ status: "400", title: "bad request", detail: "Invalid request" }] }));
      return;
    }
    handler(request, { remoteAddress: req.socket.remoteAddress ?? null })
      .then((response) => writeWebResponse(response, res))
      .catch(() => {
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      });
  };
}
