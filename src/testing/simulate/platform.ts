import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import type { Dialect } from "../../schemas/common.js";
import type { CommentRecord } from "../../schemas/run-comments.js";
import { matchRunRead } from "./run-reads.js";

/** What the integration sent to one callback URL. */
export interface ReceivedCallback {
  at: number;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

/** What the simulated platform saw for one task result id. */
export interface ResultTraffic {
  /** The request's `access_token`: plan and configuration fetches without it get 401, as from runplane (D24). */
  token?: string;
  planFetches: { authorization: string | undefined }[];
  configFetches: { authorization: string | undefined }[];
  callbacks: ReceivedCallback[];
  /** What the integration read of the run with an API token or the access token (D24), in order. */
  runReads: { route: string; status: number }[];
  /** The comments it posted on the run. */
  comments: CommentRecord[];
}

export interface SimulatedPlatform {
  origin: string;
  traffic(taskResultId: string): ResultTraffic;
  close(): Promise<void>;
}

const MAX_BODY = 5 * 1024 * 1024; // the callback body limit of decision D26
// An empty tar archive (two zero blocks), gzipped: a valid configuration version download.
const EMPTY_TGZ = gzipSync(Buffer.alloc(1024));

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });

/**
 * The platform side the integration calls back into: plan JSON, configuration download and
 * callback URLs under `/api/v2`, on a loopback port chosen by the OS. It records and answers
 * 200; judging what it recorded is the report's job.
 */
/** The bytes `[offset, offset + limit)` of a log, as go-tfe's log reader asks for them. */
function logChunk(log: string, query: URLSearchParams): string {
  const offset = Number(query.get("offset") ?? 0) || 0;
  const limit = query.has("limit") ? Number(query.get("limit")) || 0 : Infinity;
  const bytes = Buffer.from(log, "utf8");
  return bytes.subarray(offset, offset + limit).toString("utf8");
}

export function startPlatform(plan: unknown, dialect: Dialect = "default"): Promise<SimulatedPlatform> {
  const byResult = new Map<string, ResultTraffic>();
  const traffic = (id: string): ResultTraffic => {
    let entry = byResult.get(id);
    if (!entry) byResult.set(id, (entry = { planFetches: [], configFetches: [], callbacks: [], runReads: [], comments: [] }));
    return entry;
  };
  let origin = "";
  // Plans and configuration versions are named after the task result, so every fetch is attributable.
  const server: Server = createServer((req, res) => {
    void (async () => {
      const requestUrl = new URL(req.url ?? "/", "http://x");
      const path = requestUrl.pathname;
      const body = await readBody(req);
      const plan_ = /^\/api\/v2\/plans\/plan-(.+)\/json-output$/.exec(path);
      const config = /^\/api\/v2\/configuration-versions\/cv-(.+)\/download$/.exec(path);
      const callback = /^\/api\/v2\/task-results\/taskrs-(.+)\/callback$/.exec(path);
      const artifact = req.method === "GET" ? (plan_ ?? config) : null;
      if (artifact) {
        const entry = traffic(decodeURIComponent(artifact[1]!));
        (plan_ ? entry.planFetches : entry.configFetches).push({ authorization: req.headers.authorization });
        if (req.headers.authorization !== `Bearer ${entry.token}`) {
          res.writeHead(401, { "content-type": "application/vnd.api+json" }).end('{"errors":[{"status":"401","title":"unauthorized"}]}');
        } else if (plan_) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(plan));
        else res.writeHead(200, { "content-type": "application/octet-stream" }).end(EMPTY_TGZ);
      } else if (req.method === "PATCH" && callback) {
        traffic(decodeURIComponent(callback[1]!)).callbacks.push({
          at: Date.now(),
          authorization: req.headers.authorization,
          contentType: req.headers["content-type"],
          body,
        });
        res.writeHead(200, { "content-type": "application/vnd.api+json" }).end('{"data":null}');
      } else {
        const read = matchRunRead(req.method ?? "", path);
        if (!read) return void res.writeHead(404).end();
        const entry = traffic(decodeURIComponent(read.suffix));
        // An API token the simulator cannot check, or the access token; nothing is a 401.
        // D32: a log, at its `log-read-url`, needs no credential and is read in limit/offset chunks.
        const isLog = read.route.endsWith("/log");
        const answer = isLog || /^Bearer \S+$/.test(req.headers.authorization ?? "")
          ? read.answer(origin, dialect, entry.comments, body)
          : { status: 401, contentType: "application/vnd.api+json", body: '{"errors":[{"status":"401","title":"unauthorized"}]}' };
        if (isLog && answer.status === 200) answer.body = logChunk(answer.body, requestUrl.searchParams);
        entry.runReads.push({ route: read.route, status: answer.status });
        res.writeHead(answer.status, { "content-type": answer.contentType }).end(answer.body);
      }
    })().catch(() => res.writeHead(400).end());
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      origin = `http://127.0.0.1:${port}`;
      resolve({
        origin,
        traffic,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
