import type { CallbackFetch, CallbackOutcome, RunTaskRequest } from "../../src/integration/index.js";

/**
 * The example integration's run summary mode, as integrations that report on the whole
 * run do (an upstream derivative of HashiCorp's run task scaffold): with an API token it reads
 * `GET /runs/:id/` (trailing slash and all), the run's plan, apply, policy checks, comments and run
 * events, then the plan's and the apply's `log-read-url` (with no credential: the URL carries its
 * own, D32), and reports what it read as one outcome. It also leaves the summary as a comment on
 * the run. A read that fails is reported, never guessed around.
 */
export interface RunSummaryOptions {
  /** An API token with `runs >= read` on the run's workspace. */
  apiToken: string;
  /** The API base (`https://host/api/v2`). Default: taken from the request's callback URL. */
  apiUrl?: string;
  /** Leave the summary as a comment on the run (`POST /runs/:id/comments`). Default true. */
  comment?: boolean;
}

export type RunSummary = { ok: true; outcome: CallbackOutcome } | { ok: false; reason: string };

/** The API base of the platform that sent `request`: its callback URL up to `/task-results/`. */
const apiBaseOf = (request: RunTaskRequest): string => request.task_result_callback_url.replace(/\/task-results\/[^/]+\/callback$/, "");

type Json = { data?: any; included?: any[] };

export async function readRunSummary(request: RunTaskRequest, fetch: CallbackFetch, options: RunSummaryOptions): Promise<RunSummary> {
  const base = options.apiUrl ?? apiBaseOf(request);
  const headers = { authorization: `Bearer ${options.apiToken}`, accept: "application/vnd.api+json" };
  const run = encodeURIComponent(request.run_id);
  const get = async (url: string): Promise<Response> => {
    const response = await fetch(url, { method: "GET", headers });
    if (!response.ok) throw new Error(`GET ${new URL(url).pathname} answered ${response.status}`);
    return response;
  };
  const json = async (path: string): Promise<Json> => (await (await get(`${base}${path}`)).json()) as Json;
  try {
    const [runDoc, plan, apply, checks, comments, events] = await Promise.all(
      [`/runs/${run}/`, `/runs/${run}/plan`, `/runs/${run}/apply`, `/runs/${run}/policy-checks`, `/runs/${run}/comments`, `/runs/${run}/run-events`].map(json),
    );
    const [planLog, applyLog] = await Promise.all([plan!, apply!].map((phase) => readLog(fetch, phase.data?.attributes?.["log-read-url"])));
    const body = summaryMarkdown(runDoc!, plan!, apply!, checks!, comments!, events!, { plan: planLog!, apply: applyLog! });
    if (options.comment ?? true) await postComment(fetch, `${base}/runs/${run}/comments`, headers, body);
    return { ok: true, outcome: { outcomeId: "EXAMPLE-003", description: "Run summary", body, tags: { Severity: [{ label: "Info", level: "info" }] } } };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** A log is read in chunks, as go-tfe's log reader does, and at most this much of it. */
const LOG_CHUNK = 64 * 1024;
const LOG_MAX = 1024 * 1024;

/**
 * A `log-read-url` read as go-tfe reads it (logreader.go): the URL as given, its query replaced
 * by `limit=&offset=`, no Authorization header, until an empty chunk; null when there is none.
 * HCP's framing (a leading STX and a closing ETX, D48) is dropped, as go-tfe drops it.
 */
async function readLog(fetch: CallbackFetch, url: unknown): Promise<string | null> {
  if (typeof url !== "string") return null;
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < LOG_MAX; ) {
    const u = new URL(url);
    u.search = `limit=${LOG_CHUNK}&offset=${offset}`;
    const response = await fetch(u.toString(), { method: "GET", headers: { accept: "text/plain" } });
    if (!response.ok) throw new Error(`GET ${new URL(url).pathname.replace(/[^/]+$/, ":capability")} answered ${response.status}`);
    const chunk = new Uint8Array(await response.arrayBuffer());
    if (chunk.length === 0) break;
    chunks.push(chunk);
    offset += chunk.length;
  }
  return Buffer.concat(chunks).toString("utf8").replace(/^\x02/, "").replace(/\x03$/, "");
}

async function postComment(fetch: CallbackFetch, url: string, headers: Record<string, string>, body: string): Promise<void> {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/vnd.api+json" },
    body: JSON.stringify({ data: { type: "comments", attributes: { body } } }),
  });
  if (response.status !== 201) throw new Error(`POST ${new URL(url).pathname} answered ${response.status}`);
}

/** A value as a table cell: what the platform did not say shows as "-". */
const cell = (value: unknown): string => (value === undefined || value === null || value === "" ? "-" : `\`${String(value)}\``);

function lines(log: string | null): string {
  const n = log === null ? 0 : log.split("\n").filter(Boolean).length;
  return log === null ? "none" : `${n} line${n === 1 ? "" : "s"}`;
}

function summaryMarkdown(run: Json, plan: Json, apply: Json, checks: Json, comments: Json, events: Json, logs: { plan: string | null; apply: string | null }): string {
  const r = run.data?.attributes ?? {};
  const p = plan.data?.attributes ?? {};
  const a = apply.data?.attributes ?? {};
  const counts = (x: Record<string, unknown>) => `+${x["resource-additions"] ?? "?"} ~${x["resource-changes"] ?? "?"} -${x["resource-destructions"] ?? "?"}`;
  const stages = (run.data?.relationships?.["task-stages"]?.data ?? []).length;
  return [
    "## Run summary",
    "",
    "| Field | Value |",
    "|---|---|",
    `| Run | ${cell(run.data?.id)} ${cell(r.status)} |`,
    `| Terraform | ${cell(r["terraform-version"])} |`,
    `| Has changes | ${cell(r["has-changes"])} |`,
    `| Plan | ${cell(p.status)} ${counts(p)} |`,
    `| Apply | ${cell(a.status)} |`,
    `| Task stages | ${stages} |`,
    `| Policy checks | ${(checks.data ?? []).length} |`,
    `| Comments | ${(comments.data ?? []).length} |`,
    `| Run events | ${(events.data ?? []).length} |`,
    `| Plan log | ${lines(logs.plan)} |`,
    `| Apply log | ${lines(logs.apply)} |`,
  ].join("\n");
}
