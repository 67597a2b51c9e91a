import { notFound } from "../../errors.js";
import { ATTEMPT_LIMITS, DeliveryAttemptAttributes, type DeliveryAttemptRecord } from "../../schemas/delivery-attempts.js";
import type { JsonApiDocument, ResourceDefinition } from "../jsonapi.js";
import { toPageRequest } from "../pagination.js";
import type { Route, RouteContext } from "../types.js";
import { authorizedIn } from "./run-task-support.js";

/**
 * Delivery attempts of task results (decision D31): `GET /task-results/:id/delivery-attempts`,
 * readable by whoever may read the result (runs >= read, D21), and the `delivery-attempts` include
 * of `GET /task-results/:id`, which adds the relationship only when asked for: a document HCP
 * Terraform's clients read carries nothing they do not know unless they ask (D1). And "retry now":
 * `POST /task-results/:id/actions/retry`.
 */

const seg = encodeURIComponent;

/** decision D8: both spellings of the one include of a task result. */
export const RESULT_INCLUDES = { "delivery-attempts": "delivery-attempts", delivery_attempts: "delivery-attempts" } as const;

export const deliveryAttemptResource = (basePath: string): ResourceDefinition => ({
  type: "delivery-attempts",
  attributes: DeliveryAttemptAttributes,
  relationships: {
    taskResult: { type: "task-results", related: (d) => `${basePath}/task-results/${seg(String(d.taskResult))}` },
  },
});

/**
 * decision D63: what an integration answered is for whoever manages run tasks (its operators
 * debug with it); a reader of runs sees the attempt without it (`response-excerpt` null).
 */
const attemptData = (a: DeliveryAttemptRecord, answers: boolean) => ({
  id: a.id,
  attempt: a.number,
  startedAt: a.startedAt,
  durationMs: a.durationMs,
  outcome: a.outcome,
  status: a.status,
  errorCode: a.errorCode,
  detail: a.detail,
  responseExcerpt: answers ? a.excerpt : null,
  responseExcerptTruncated: answers ? a.excerptTruncated : false,
  agentId: a.agentId ?? null,
  agentName: a.agentName ?? null,
  taskResult: a.taskResultId,
});

/** The `delivery-attempts` include of a result: every attempt kept (at most 20), newest first. */
export async function includedAttempts(ctx: RouteContext, taskResultId: string, target: AuthTarget): Promise<{ ids: string[]; resources: JsonApiDocument[] }> {
  const { items } = await ctx.app.services.runTasks.listDeliveryAttempts(taskResultId, { offset: 0, limit: ATTEMPT_LIMITS.perResult });
  const answers = await mayReadAnswers(ctx, target);
  const doc = ctx.app.jsonapi.collection("delivery-attempts", items.map((a) => attemptData(a, answers)));
  return { ids: items.map((a) => a.id), resources: doc.data as JsonApiDocument[] };
}

type AuthTarget = Awaited<ReturnType<typeof loadResult>>["target"];

/** decision D63: whether the caller sees what integrations answered (it manages the workspace's run tasks). */
const mayReadAnswers = (ctx: RouteContext, target: AuthTarget): Promise<boolean> => ctx.app.authorizer(ctx.principal!, "run-tasks:manage", target);

const loadResult = (ctx: RouteContext) => authorizedIn(ctx, () => ctx.app.services.runTasks.getResult(ctx.params.task_result_id!));

export const deliveryAttemptRoutes: Route[] = [
  {
    method: "GET",
    path: "/task-results/:task_result_id/delivery-attempts",
    auth: "principal",
    query: { page: "always" },
    async handle(ctx) {
      const { record: result, target } = await loadResult(ctx);
      const page = ctx.query.page!;
      const list = await ctx.app.services.runTasks.listDeliveryAttempts(result.id, toPageRequest(page));
      const options = { url: ctx.url, pagination: { ...page, total: list.total } };
      const answers = await mayReadAnswers(ctx, target);
      return { status: 200, document: ctx.app.jsonapi.collection("delivery-attempts", list.items.map((a) => attemptData(a, answers)), options) };
    },
  },
  {
    method: "POST",
    path: "/task-results/:task_result_id/actions/retry",
    auth: "principal",
    async handle(ctx) {
      // The route's action is `run-tasks:manage` (route-permissions.ts): a resend is for whoever
      // runs the workspace's integrations, not only for override holders (an override changes a
      // verdict, a resend does not). The result must be readable too (runs >= read), or the answer
      // is 404 like the result's own (D4). Any access to a project reads its runs today (D20's
      // lowest runs level is read), so this holds already; the check keeps the rule where it applies.
      const { record: result, target } = await loadResult(ctx);
      if (!(await ctx.app.authorizer(ctx.principal, "runs:read", target))) throw notFound();
      await ctx.app.services.runTasks.retryDelivery(result.id);
      // decision D31: accepted; the attempt is made by a dispatcher, woken at once.
      return { status: 202 };
    },
  },
];
