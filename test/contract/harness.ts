import http from "node:http";
import { createKeyring, generateKey, type Keyring, type RunplaneOptions } from "../../src/index.js";
import { toNodeListener, type FetchHandler } from "../../src/node.js";
import { createTestApp, type TestApp } from "../helpers/app.js";
import { payloadOf } from "../helpers/run-tasks.js";

/**
 * The reference app (createRunplane over memory storage, the HTTP suites' directory) behind a real
 * node:http listener on 127.0.0.1, called the way go-tfe calls it: `Authorization: Bearer`, the
 * JSON:API media type, and for logs nothing but the URL it was given (D32).
 */

export interface Sent {
  method: string;
  /** The path as sent, query string included. */
  path: string;
  status: number;
  contentType: string | null;
  text: string;
  json: any;
}

export interface ContractServer {
  app: TestApp;
  /** The access token of a result's run task request, as the integration received it. */
  accessToken(resultId: string): Promise<string>;
  /** `http://127.0.0.1:<port>`: the app's `publicUrl`, so absolute URLs it writes point back here. */
  origin: string;
  /** Every API call made through `call`, in order: what the contract decodes. */
  sent: Sent[];
  /** go-tfe's request: bearer token (the owners' unless given), `Accept` and, with a body, `Content-Type` of JSON:API. */
  call(method: string, path: string, init?: { token?: string | null; body?: unknown; plainJson?: boolean }): Promise<Sent>;
  /** go-tfe's log reader: a GET of `url` with no Authorization header (logreader.go). */
  fetchBare(url: string): Promise<{ status: number; text: string }>;
  close(): Promise<void>;
}

const MEDIA = "application/vnd.api+json";

export async function startContractServer(options: Partial<RunplaneOptions> = {}): Promise<ContractServer> {
  let handler: FetchHandler = async () => new Response(null, { status: 503 });
  const server = http.createServer(toNodeListener((request) => handler(request)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const keyring: Keyring = createKeyring({ keys: [{ id: "k1", key: generateKey() }] });
  const app = await createTestApp({ dialect: "hcp-terraform", publicUrl: origin, keyring, ...options });
  const accessToken = async (resultId: string) => (await payloadOf(app.storage, keyring, resultId)).access_token as string;
  handler = app.runplane.handler;
  const sent: Sent[] = [];

  async function call(method: string, path: string, init: { token?: string | null; body?: unknown; plainJson?: boolean } = {}): Promise<Sent> {
    const headers: Record<string, string> = { accept: MEDIA, "user-agent": "go-tfe" };
    const token = init.token === undefined ? app.ownerToken : init.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (init.body !== undefined) headers["content-type"] = init.plainJson ? "application/json" : MEDIA;
    const res = await fetch(`${origin}/api/v2${path}`, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
    const text = await res.text();
    const contentType = res.headers.get("content-type");
    const json = contentType?.includes("json") && text !== "" ? JSON.parse(text) : undefined;
    const out = { method, path, status: res.status, contentType, text, json };
    sent.push(out);
    return out;
  }

  async function fetchBare(url: string) {
    const res = await fetch(url, { headers: { accept: "*/*", "user-agent": "go-tfe" } });
    return { status: res.status, text: await res.text() };
  }

  async function close() {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
  return { app, accessToken, origin, sent, call, fetchBare, close };
}

/**
 * go-tfe's logreader.go: while reading it replaces the URL's whole query with `limit` and `offset`
 * (a capability in the query would be lost) and sends no Authorization header.
 */
export function logChunkUrl(logReadUrl: string, offset: number, limit: number): string {
  const url = new URL(logReadUrl);
  url.search = `limit=${limit}&offset=${offset}`;
  return url.toString();
}

/**
 * go-tfe's LogReader (logreader.go), step by step: chunks of `limit` bytes from `offset` with no
 * Authorization; a first byte STX (0x02) is dropped and counted, a chunk ending with ETX (0x03)
 * marks the end; whenever a read brings nothing and the log ended (or, without STX, after the
 * first read; with STX but no ETX, every tenth), it asks `done()` (go-tfe reads the plan or apply
 * again: done once its status is `finished`, `errored`, `canceled` or `unreachable`) and stops
 * when it says so. Bounded: throws after `maxReads`, where go-tfe would poll until its deadline.
 */
export async function readLogLikeGoTfe(
  s: Pick<ContractServer, "fetchBare">,
  logReadUrl: string,
  limit: number,
  done: () => Promise<boolean>,
  maxReads = 200,
): Promise<{ text: string; framed: boolean }> {
  let offset = 0;
  let text = "";
  let [startOfText, endOfText] = [false, false];
  for (let reads = 1; reads <= maxReads; reads++) {
    const res = await s.fetchBare(logChunkUrl(logReadUrl, offset, limit));
    if (res.status !== 200) throw new Error(`chunk at ${offset}: ${res.status}`);
    let chunk = res.text;
    if (chunk.length > 0 && !startOfText && chunk.charCodeAt(0) === 2) {
      [startOfText, chunk] = [true, chunk.slice(1)];
      offset++;
    }
    if (chunk.length > 0 && startOfText && chunk.charCodeAt(chunk.length - 1) === 3) {
      [endOfText, chunk] = [true, chunk.slice(0, -1)];
      offset++;
    }
    if (chunk.length > 0) {
      text += chunk;
      offset += Buffer.byteLength(chunk);
      continue;
    }
    if ((startOfText && endOfText) || (startOfText && reads % 10 === 0) || (!startOfText && reads > 1)) {
      if (await done()) return { text, framed: startOfText && endOfText };
    }
  }
  throw new Error(`the log reader did not stop within ${maxReads} reads`);
}

/** go-tfe's `done` of a plan or apply: read it again; final once `finished`, `errored`, `canceled` or `unreachable`. */
export const phaseDone = (s: ContractServer, path: string) => async (): Promise<boolean> =>
  ["finished", "errored", "canceled", "unreachable"].includes((await s.call("GET", path)).json?.data?.attributes?.status);
