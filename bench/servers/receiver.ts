import { createServer } from "node:http";
import { Agent, request } from "undici";
import { wallNow } from "../lib/open-loop.js";

/**
 * The run task integration of the delivery scenarios: a plain node:http server in its own process.
 * `POST /ok/*` answers 200 with an empty body and does nothing else. `POST /callback/*` answers the
 * same, then PATCHes the request's callback URL with its access token and status `passed` in the
 * HCP Terraform callback format, the way an integration that decides at once would. The
 * verification request (`access_token: "test-token"`) only gets its 200. `POST /timed/*` is
 * `/callback/*` that also notes when each request had arrived in full (wall-clock ms, comparable
 * between processes), by task result; `GET /received` answers those notes and forgets them.
 * Prints `READY {"url"}`.
 */
const callbacks = new Agent({ connections: 64 });
let failures = 0;

const PASSED = JSON.stringify({ data: { type: "task-results", attributes: { status: "passed", message: "bench: no findings" } } });

/** task result id -> [run id, wall-clock ms the request arrived]. */
let received: Record<string, [string, number]> = {};

async function callBack(body: string, at?: number): Promise<void> {
  const payload = JSON.parse(body) as { access_token: string; task_result_callback_url: string; task_result_id: string; run_id: string };
  if (payload.access_token === "test-token") return;
  if (at !== undefined) received[payload.task_result_id] = [payload.run_id, at];
  const res = await request(payload.task_result_callback_url, {
    dispatcher: callbacks,
    method: "PATCH",
    headers: { authorization: `Bearer ${payload.access_token}`, "content-type": "application/vnd.api+json" },
    body: PASSED,
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`callback answered ${res.statusCode}`);
}

// Reported, never thrown: a lost callback shows up as a run that never passes.
const report = (error: unknown): void => {
  if (failures++ < 5) process.stderr.write(`receiver: ${error instanceof Error ? error.message : String(error)}\n`);
};

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/received") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(received));
    received = {};
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const at = req.url?.startsWith("/timed/") ? wallNow() : undefined;
    const then =
      at !== undefined || req.url?.startsWith("/callback/") ? () => callBack(Buffer.concat(chunks).toString(), at).catch(report) : undefined;
    // The callback goes after the 200 is written, as spec 4.1 expects: acknowledged, then the verdict.
    res.writeHead(200, { "content-length": "0" }).end(then);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`READY ${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  void callbacks.close().then(() => process.exit(0));
});
