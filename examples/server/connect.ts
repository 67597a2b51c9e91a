import type { Server } from "node:http";
import type { Duplex } from "node:stream";
import { ApiError } from "../../src/index.js";
import { errorDocument } from "../../src/http/jsonapi.js";

/** Every method a route of the server may have (GET answers HEAD too). */
const ALLOW = "GET, HEAD, POST, PATCH, DELETE";

const body = JSON.stringify(
  errorDocument(new ApiError("method-not-allowed", { detail: `Allowed: ${ALLOW}. CONNECT is not: this server is not a proxy` })),
);

const answer = [
  "HTTP/1.1 405 Method Not Allowed",
  "Content-Type: application/vnd.api+json",
  `Content-Length: ${Buffer.byteLength(body)}`,
  `Allow: ${ALLOW}`,
  "Connection: close",
  "",
  body,
].join("\r\n");

/**
 * CONNECT never reaches the Web handler: Node hands it to the server's `connect` listener and,
 * without one, drops the socket unanswered. It is answered 405 like any method a route lacks, and
 * the connection closed (a tunnel request's bytes after the head are never read as a request).
 */
export function answerConnect(server: Server): void {
  server.on("connect", (_request: unknown, socket: Duplex) => {
    socket.on("error", () => undefined);
    socket.end(answer);
  });
}
