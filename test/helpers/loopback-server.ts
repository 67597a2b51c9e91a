/**
 * A scriptable HTTP/1.1 receiver on 127.0.0.1 for delivery tests. It is raw TCP on purpose: tests
 * see the exact request bytes, count connections, and can misbehave in ways node:http will not
 * (reset mid-request, dribble a body, never answer). Every response closes its connection, so
 * each request after the first one needs a new connection.
 */
import { afterEach } from "vitest";
import { once } from "node:events";
import { createServer, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";

export interface ReceivedRequest {
  /** Head and body exactly as they arrived. */
  raw: Buffer;
  method: string;
  path: string;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

export type Reply =
  | { kind: "respond"; status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  /** Sends the head at once, then `chunk` every `intervalMs`, `count` times. */
  | { kind: "dribble"; status: number; chunk: string; intervalMs: number; count: number }
  /** Announces and streams `bytes` bytes, honouring backpressure, until done or the peer leaves. */
  | { kind: "huge"; status: number; bytes: number }
  /** Answers with a TCP RST once the request has arrived. */
  | { kind: "reset" }
  /** Reads the request and never answers. */
  | { kind: "hang" };

export type Script = Reply | ((req: ReceivedRequest, index: number) => Reply);

export interface LoopbackServer {
  readonly port: number;
  /** `http(s)://127.0.0.1:<port><path>` */
  url(path?: string): string;
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** Body bytes handed to the kernel by `huge` and `dribble` replies. */
  readonly bodyBytesSent: number;
  /** Resolves when every connection accepted so far has closed. */
  idle(): Promise<void>;
  setScript(script: Script): void;
  close(): Promise<void>;
}

const HEAD_END = Buffer.from("\r\n\r\n");

export interface LoopbackServerOptions {
  /** Serve HTTPS with this key and certificate (PEM); connections count once the handshake is done. */
  tls?: { key: string; cert: string };
}

export async function startLoopbackServer(
  initial: Script = { kind: "respond", status: 200, body: "ok" },
  options: LoopbackServerOptions = {},
): Promise<LoopbackServer> {
  let script = initial;
  let connections = 0;
  let bodyBytesSent = 0;
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const closed: Promise<void>[] = [];

  const onConnection = (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    closed.push(new Promise((resolve) => socket.on("close", () => resolve())));
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined); // resets and EPIPE are expected here
    let buffered = Buffer.alloc(0);
    let answered = false;
    socket.on("data", (data: Buffer) => {
      if (answered) return;
      buffered = Buffer.concat([buffered, data]);
      const req = parseRequest(buffered);
      if (!req) return;
      answered = true;
      const index = requests.push(req) - 1;
      const reply = typeof script === "function" ? script(req, index) : script;
      void answer(socket, reply, (n) => (bodyBytesSent += n));
    });
  };
  const server = options.tls ? createTlsServer(options.tls, onConnection) : createServer(onConnection);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("loopback server has no port");
  const port = address.port;

  return {
    port,
    url: (path = "/") => `${options.tls ? "https" : "http"}://127.0.0.1:${port}${path}`,
    requests,
    get connections() {
      return connections;
    },
    get bodyBytesSent() {
      return bodyBytesSent;
    },
    idle: async () => {
      await Promise.all(closed);
    },
    setScript: (next) => {
      script = next;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function parseRequest(buffered: Buffer): ReceivedRequest | null {
  const headEnd = buffered.indexOf(HEAD_END);
  if (headEnd === -1) return null;
  const [requestLine = "", ...lines] = buffered.subarray(0, headEnd).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  const length = Number(headers["content-length"] ?? 0);
  const bodyStart = headEnd + HEAD_END.length;
  if (buffered.length < bodyStart + length) return null;
  const [method = "", path = ""] = requestLine.split(" ");
  return {
    raw: Buffer.from(buffered.subarray(0, bodyStart + length)),
    method,
    path,
    headers,
    body: Buffer.from(buffered.subarray(bodyStart, bodyStart + length)),
  };
}

const head = (status: number, headers: Record<string, string>): string =>
  `HTTP/1.1 ${status} Status\r\n${Object.entries({ connection: "close", ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")}\r\n`;

// Not events.once: that rejects on 'error', and a peer that hangs up mid-body is the point here.
const drainedOrGone = (socket: Socket) =>
  new Promise<void>((resolve) => {
    const done = () => {
      socket.off("drain", done).off("close", done);
      resolve();
    };
    socket.on("drain", done).on("close", done);
  });

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function answer(socket: Socket, reply: Reply, sent: (bytes: number) => void): Promise<void> {
  switch (reply.kind) {
    case "hang":
      return;
    case "reset":
      socket.resetAndDestroy();
      return;
    case "respond": {
      if (reply.delayMs) await pause(reply.delayMs);
      const body = Buffer.from(reply.body ?? "");
      socket.end(Buffer.concat([Buffer.from(head(reply.status, { "content-length": String(body.length), ...reply.headers })), body]));
      return;
    }
    case "dribble": {
      const chunk = Buffer.from(reply.chunk);
      socket.write(head(reply.status, { "content-length": String(chunk.length * reply.count) }));
      for (let i = 0; i < reply.count && !socket.destroyed; i += 1) {
        await pause(reply.intervalMs);
        if (socket.destroyed) break;
        socket.write(chunk);
        sent(chunk.length);
      }
      socket.end();
      return;
    }
    case "huge": {
      // One reused 64 KiB block: the server side never holds the whole body either.
      const block = Buffer.alloc(64 * 1024, 0x61);
      socket.write(head(reply.status, { "content-length": String(reply.bytes) }));
      let left = reply.bytes;
      while (left > 0 && !socket.destroyed) {
        const piece = left >= block.length ? block : block.subarray(0, left);
        const flushed = socket.write(piece);
        sent(piece.length);
        left -= piece.length;
        if (!flushed) await drainedOrGone(socket);
      }
      socket.end();
      return;
    }
  }
}

/**
 * For a test file: a function that starts loopback servers, each closed after the test that started
 * it. Call it at module level before the file's own `afterEach`, which then runs first (hooks unwind).
 */
export function loopbacksClosedAfterEach(): (script: Script) => Promise<LoopbackServer> {
  const servers: LoopbackServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return async (script) => {
    const server = await startLoopbackServer(script);
    servers.push(server);
    return server;
  };
}
