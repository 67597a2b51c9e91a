import { commentEventId, runEventsOf } from "../../domain/run-events.js";
import { createJsonApi } from "../../http/jsonapi.js";
import { commentData, phaseData, runData, runEventData, runReadResources } from "../../http/run-documents.js";
import type { Dialect } from "../../schemas/common.js";
import type { CheckedRunDetails } from "../../schemas/run-details.js";
import type { RunRecord } from "../../schemas/run-task-records.js";
import type { CommentRecord } from "../../schemas/run-comments.js";

/**
 * The run read side of the simulated platform (issue 27): integrations that summarise a run read
 * it with an API token, so the simulator answers them as runplane does (`GET /runs/:id`, its plan
 * and apply, the plan's log, run events, comments, policy checks), from one simulated run per
 * request. Any bearer token is taken: the simulator has no API tokens to check.
 */

const BASE = "/api/v2";
const jsonapi = createJsonApi(runReadResources(BASE));

/** What a simulated host says of every run: a finished plan of the simulated plan's three changes. */
const DETAILS: CheckedRunDetails = {
  status: "post_plan_running",
  statusTimestamps: { "plan-queued-at": "2026-01-01T00:00:01+00:00", "planning-at": "2026-01-01T00:00:02+00:00" },
  hasChanges: true,
  terraformVersion: "1.9.0",
  source: "tfe-api",
  plan: { status: "finished", hasChanges: true, resourceAdditions: 1, resourceChanges: 1, resourceDestructions: 1, resourceImports: 0, statusTimestamps: { "finished-at": "2026-01-01T00:00:05+00:00" } },
  apply: { status: "pending" },
};
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

/** The read route `method path` names, with the id suffix of its run; null for any other path. */
export function matchRunRead(method: string, path: string): RunRead | null {
  // A trailing slash is the same route, as in runplane.
  const match = /^\/api\/v2\/(runs|plans|applies)\/(run|plan|apply)-([^/]+)(\/[a-z-]+)?$/.exec(path.replace(/\/$/, ""));
  if (!match || !["runs:run", "plans:plan", "applies:apply"].includes(`${match[1]}:${match[2]}`)) return null;
  const [, collection, , suffix, tail = ""] = match;
  const route = `${method} /${collection}/:id${tail}`;
  return ROUTES.has(route) ? { suffix: suffix!, route, answer: (origin, dialect, comments, body) => answers(simulatedRun(suffix!), origin, dialect, comments, body)[route]!() } : null;
}

const ROUTES = new Set([
  "GET /runs/:id", "GET /runs/:id/plan", "GET /plans/:id", "GET /runs/:id/apply", "GET /applies/:id", "GET /plans/:id/log",
  "GET /runs/:id/run-events", "GET /runs/:id/comments", "GET /runs/:id/policy-checks", "POST /runs/:id/comments",
]);

function answers(run: RunRecord, origin: string, dialect: Dialect, comments: CommentRecord[], body: string): Record<string, () => RunReadAnswer> {
  const plan = () => doc({ data: jsonapi.resource("plans", phaseData(run.planId, DETAILS.plan, `${origin}${BASE}/plans/${run.planId}/log`, dialect, true)).data });
  const apply = () => doc({ data: jsonapi.resource("applies", phaseData(run.applyId, DETAILS.apply, null, dialect, false)).data });
  return {
    "GET /runs/:id": () => doc(jsonapi.resource("runs", runData(run, DETAILS, { stageIds: [], commentIds: comments.map((c) => c.id), policyCheckIds: [] }, dialect))),
    "GET /runs/:id/plan": plan,
    "GET /plans/:id": plan,
    "GET /runs/:id/apply": apply,
    "GET /applies/:id": apply,
    "GET /plans/:id/log": () => ({ status: 200, contentType: "text/plain; charset=utf-8", body: SIMULATED_PLAN_LOG }),
    "GET /runs/:id/run-events": () => doc(jsonapi.collection("run-events", runEventsOf(run, [], comments).map(runEventData))),
    "GET /runs/:id/comments": () => doc(jsonapi.collection("comments", comments.map((c) => commentData(c, commentEventId(run.id, c.id))))),
    "GET /runs/:id/policy-checks": () => doc({ data: [] }),
    "POST /runs/:id/comments": () => {
      const text = (JSON.parse(body) as { data?: { attributes?: { body?: unknown } } })?.data?.attributes?.body;
      if (typeof text !== "string" || text.trim() === "") return doc({ errors: [{ status: "422", title: "invalid attribute", detail: "Body can't be blank", source: { pointer: "/data/attributes/body" } }] }, 422);
      const comment: CommentRecord = { id: `wsc-${run.id.slice("run-".length)}-${comments.length + 1}`, runId: run.id, workspaceId: run.workspaceId, organization: run.organization, body: text, authorId: null, createdAt: new Date().toISOString() };
      comments.push(comment);
      return doc(jsonapi.resource("comments", commentData(comment, commentEventId(run.id, comment.id))), 201);
    },
  };
}
