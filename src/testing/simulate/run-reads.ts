import { commentEventId, runEventsOf, runIdOfEvent } from "../../domain/run-events.js";
import { createJsonApi } from "../../http/jsonapi.js";
import { commentData, phaseData, policyCheckData, runData, runEventData, runReadResources } from "../../http/run-documents.js";
import type { Dialect } from "../../schemas/common.js";
import type { CheckedPolicyCheck, CheckedRunDetails } from "../../schemas/run-details.js";
import type { RunRecord } from "../../schemas/run-task-records.js";
import type { CommentRecord } from "../../schemas/run-comments.js";

/**
 * The run read side of the simulated platform (D24): integrations that summarise a run read
 * it with an API token, so the simulator answers them as runplane does (`GET /runs/:id`, its plan
 * and apply, the plan's log, run events, comments, policy checks, and one run event or policy
 * check by its id, D36), from one simulated run per request. Any bearer token is taken: the
 * simulator has no API tokens to check.
 */

const BASE = "/api/v2";
const jsonapi = createJsonApi(runReadResources(BASE));

/** What a simulated host says of every run: a finished plan of the simulated plan's three changes. */
const DETAILS: CheckedRunDetails = {
  status: "post_plan_running",
  statusTimestamps: { "plan-queued-at": "2026-01-01T00:00:01.000+00:00", "planning-at": "2026-01-01T00:00:02.000+00:00" },
  hasChanges: true,
  terraformVersion: "1.9.0",
  source: "tfe-api",
  plan: { status: "finished", hasChanges: true, resourceAdditions: 1, resourceChanges: 1, resourceDestructions: 1, resourceImports: 0, statusTimestamps: { "finished-at": "2026-01-01T00:00:05.000+00:00" } },
  apply: { status: "pending" },
};
/** The simulated host's one policy check of a run (`polchk-<suffix>`): its run is in its id (D36). */
const policyCheck = (suffix: string): CheckedPolicyCheck => ({
  id: `polchk-${suffix}`,
  status: "passed",
  scope: "organization",
  statusTimestamps: { "queued-at": "2026-01-01T00:00:05.000+00:00", "passed-at": "2026-01-01T00:00:05.500+00:00" },
  result: { result: true, passed: 1, totalFailed: 0, hardFailed: 0, softFailed: 0, advisoryFailed: 0, duration: 12 },
});
export const SIMULATED_PLAN_LOG = "Terraform will perform the following actions:\n  + null_resource.created\n  ~ null_resource.updated\n  - null_resource.deleted\n\nPlan: 1 to add, 1 to change, 1 to destroy.\n";

export const simulatedRun = (suffix: string): RunRecord => ({
  id: `run-${suffix}`,
  organization: "simulated-org",
  workspaceId: `ws-${suffix}`,
  message: "runplane simulated run",
  createdBy: "simulator",
  createdAt: "2026-01-01T00:00:00.000Z",
  isSpeculative: false,
  configurationVersionId: `cv-${suffix}`,
  configurationVersionDownloadable: true,
  planId: `plan-${suffix}`,
  applyId: `apply-${suffix}`,
  vcs: null,
});

export interface RunReadAnswer {
  status: number;
  contentType: string;
  body: string;
}

const doc = (document: unknown, status = 200): RunReadAnswer => ({ status, contentType: "application/vnd.api+json", body: JSON.stringify(document) });

/** What the simulated run of `suffix` answers, given the comments posted on it so far. */
export interface RunRead {
  suffix: string;
  route: string;
  answer(origin: string, dialect: Dialect, comments: CommentRecord[], body: string): RunReadAnswer;
}

/** `GET /run-events/:id` and `GET /policy-checks/:id`: the id names the run, as in runplane (D36). */
function byId(path: string): { suffix: string; route: string; id: string } | null {
  const match = /^\/api\/v2\/(run-events|policy-checks)\/([^/]+)$/.exec(path);
  if (!match) return null;
  const id = decodeURIComponent(match[2]!);
  const runId = match[1] === "run-events" ? runIdOfEvent(id) : id.startsWith("polchk-") ? `run-${id.slice("polchk-".length)}` : null;
  if (runId === null || !runId.startsWith("run-") || runId.length === "run-".length) return null;
  return { suffix: encodeURIComponent(runId.slice("run-".length)), route: `GET /${match[1]}/:id`, id };
}

/** The read route `method path` names, with the id suffix of its run; null for any other path. */
export function matchRunRead(method: string, path: string): RunRead | null {
  // A trailing slash is the same route, as in runplane.
  const trimmed = path.replace(/\/$/, "");
  const one = method === "GET" ? byId(trimmed) : null;
  if (one) return { suffix: one.suffix, route: one.route, answer: (origin, dialect, comments) => oneOf(simulatedRun(decodeURIComponent(one.suffix)), one.route, one.id, dialect, comments) };
  const match = /^\/api\/v2\/(runs|plans|applies)\/(run|plan|apply)-([^/]+)(\/[a-z-]+)?$/.exec(trimmed);
  if (!match || !["runs:run", "plans:plan", "applies:apply"].includes(`${match[1]}:${match[2]}`)) return null;
  const [, collection, , suffix, tail = ""] = match;
  const route = `${method} /${collection}/:id${tail}`;
  return ROUTES.has(route) ? { suffix: suffix!, route, answer: (origin, dialect, comments, body) => answers(simulatedRun(suffix!), origin, dialect, comments, body)[route]!() } : null;
}

const NOT_FOUND = (): RunReadAnswer => doc({ errors: [{ status: "404", title: "not found" }] }, 404);

/** One run event or policy check of the simulated run, or 404 when the run has no such one. */
function oneOf(run: RunRecord, route: string, id: string, dialect: Dialect, comments: CommentRecord[]): RunReadAnswer {
  if (route === "GET /run-events/:id") {
    const event = runEventsOf(run, [], comments).find((e) => e.id === id);
    return event ? doc(jsonapi.resource("run-events", runEventData(event))) : NOT_FOUND();
  }
  const check = policyCheck(run.id.slice("run-".length));
  return check.id === id ? doc(jsonapi.resource("policy-checks", policyCheckData(check, run.id, dialect))) : NOT_FOUND();
}

const ROUTES = new Set([
  "GET /runs/:id", "GET /runs/:id/plan", "GET /plans/:id", "GET /runs/:id/apply", "GET /applies/:id", "GET /plans/:id/log",
  "GET /runs/:id/run-events", "GET /runs/:id/comments", "GET /runs/:id/policy-checks", "POST /runs/:id/comments",
]);

function answers(run: RunRecord, origin: string, dialect: Dialect, comments: CommentRecord[], body: string): Record<string, () => RunReadAnswer> {
  const plan = () => doc({ data: jsonapi.resource("plans", phaseData(run.planId, DETAILS.plan, `${origin}${BASE}/plans/${run.planId}/log`, dialect, true)).data });
  const apply = () => doc({ data: jsonapi.resource("applies", phaseData(run.applyId, DETAILS.apply, null, dialect, false)).data });
  const check = policyCheck(run.id.slice("run-".length));
  return {
    "GET /runs/:id": () => doc(jsonapi.resource("runs", runData(run, DETAILS, { stageIds: [], commentIds: comments.map((c) => c.id), policyCheckIds: [check.id], runEventIds: runEventsOf(run, [], comments).map((e) => e.id) }, dialect))),
    "GET /runs/:id/plan": plan,
    "GET /plans/:id": plan,
    "GET /runs/:id/apply": apply,
    "GET /applies/:id": apply,
    // decision D48: HCP's framing in the hcp-terraform dialect; the simulated plan is finished, so ETX too.
    "GET /plans/:id/log": () => ({ status: 200, contentType: "text/plain; charset=utf-8", body: dialect === "hcp-terraform" ? `\x02${SIMULATED_PLAN_LOG}\x03` : SIMULATED_PLAN_LOG }),
    "GET /runs/:id/run-events": () => doc(jsonapi.collection("run-events", runEventsOf(run, [], comments).map(runEventData))),
    "GET /runs/:id/comments": () => doc(jsonapi.collection("comments", comments.map((c) => commentData(c, commentEventId(run.id, c.id))))),
    "GET /runs/:id/policy-checks": () => doc(jsonapi.collection("policy-checks", [policyCheckData(check, run.id, dialect)])),
    "POST /runs/:id/comments": () => {
      const text = (JSON.parse(body) as { data?: { attributes?: { body?: unknown } } })?.data?.attributes?.body;
      if (typeof text !== "string" || text.trim() === "") return doc({ errors: [{ status: "422", title: "invalid attribute", detail: "Body can't be blank", source: { pointer: "/data/attributes/body" } }] }, 422);
      const comment: CommentRecord = { id: `wsc-${run.id.slice("run-".length)}-${comments.length + 1}`, runId: run.id, workspaceId: run.workspaceId, organization: run.organization, body: text, authorId: null, createdAt: new Date().toISOString() };
      comments.push(comment);
      return doc(jsonapi.resource("comments", commentData(comment, commentEventId(run.id, comment.id))), 201);
    },
  };
}
