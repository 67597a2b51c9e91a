import { toReadTags } from "../../domain/outcomes.js";
import { notFound } from "../../errors.js";
import type { OutcomeView, TaskResultView, TaskStageView } from "../../schemas/task-stage-views.js";
import type { ResultAgentFacts } from "../../services/pool-presence.js";
import { RESULT_LIMITS } from "../../schemas/run-tasks.js";
import type { JsonApiDocument, ResourceDefinition } from "../jsonapi.js";
import { OutcomeAttributes, TaskResultAttributes, TaskStageAttributes } from "../../schemas/wire.js";
import { toPageRequest } from "../pagination.js";
import type { AuthTarget, Route, RouteContext } from "../types.js";
import { includedAttempts, RESULT_INCLUDES } from "./delivery-attempts.js";
import {
  authorizedIn,
  bearerToken,
  overrideComment,
  STAGE_INCLUDES,
  workspaceResource,
} from "./run-task-support.js";
import { runResourceOf } from "./run-read-support.js";

/** Task stages, task results and outcomes (spec 4.3; decisions D7, D8, D13, D17, D18). */

const seg = encodeURIComponent;

export const taskStageResources = (basePath: string): ResourceDefinition[] => [
  {
    type: "task-stages",
    attributes: TaskStageAttributes,
    // Maps whose keys are written as given (D9: `<status>-at` keys, hyphenated).
    verbatim: ["statusTimestamps", "permissions", "actions"],
    self: (d) => `${basePath}/task-stages/${seg(String(d.id))}`,
    relationships: {
      run: { type: "runs", related: (d) => `${basePath}/runs/${seg(String(d.run))}` },
      taskResults: { type: "task-results", many: true },
      policyEvaluations: { type: "policy-evaluations", many: true },
    },
  },
  {
    type: "task-results",
    attributes: TaskResultAttributes,
    verbatim: ["statusTimestamps"],
    self: (d) => `${basePath}/task-results/${seg(String(d.id))}`,
    relationships: {
      taskStage: { type: "task-stages", related: (d) => `${basePath}/task-stages/${seg(String(d.taskStage))}` },
      // Linkage lists the outcome ids (at most RESULT_LIMITS.outcomes, D26); the related list pages them.
      taskResultOutcomes: { type: "task-result-outcomes", many: true, related: (d) => `${basePath}/task-results/${seg(String(d.id))}/outcomes` },
      // decision D31: only with `include=delivery-attempts`.
      deliveryAttempts: { type: "delivery-attempts", many: true, optional: true, related: (d) => `${basePath}/task-results/${seg(String(d.id))}/delivery-attempts` },
    },
  },
  {
    type: "task-result-outcomes",
    attributes: OutcomeAttributes,
    optionalLinks: ["body"],
    verbatim: ["tags"],
    self: (d) => `${basePath}/task-result-outcomes/${seg(String(d.id))}`,
    relationships: {
      taskResult: { type: "task-results", related: (d) => `${basePath}/task-results/${seg(String(d.taskResult))}` },
    },
  },
];

/** decision D34: what a result says of its agent pool and agent (nulls for a direct result). */
const agentData = (facts: ResultAgentFacts | null) => ({
  agentPoolName: facts?.poolName ?? null,
  agentId: facts?.agentId ?? null,
  agentName: facts?.agentName ?? null,
  agentConnected: facts ? facts.connected : null,
  agentLastSeenAt: facts?.lastSeenAt ?? null,
  waitingForAgent: facts?.waiting ?? null,
});

const resultData = (r: TaskResultView, outcomeIds: string[]) => ({
  id: r.id,
  status: r.status,
  message: r.message,
  url: r.url,
  statusTimestamps: r.statusTimestamps,
  taskId: r.taskId,
  taskName: r.taskName,
  taskUrl: r.taskUrl,
  stage: r.stage,
  isSpeculative: r.isSpeculative,
  workspaceTaskId: r.workspaceTaskId,
  workspaceTaskEnforcementLevel: r.enforcementLevel,
  taskResultOutcomesCount: r.outcomesCount,
  agentPoolId: r.agentPoolId,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
  taskStage: r.stageId,
  taskResultOutcomes: outcomeIds,
});

/** The ids of a result's outcomes in received order; a result holds at most RESULT_LIMITS.outcomes (D26). */
async function outcomeIds(ctx: RouteContext, r: TaskResultView): Promise<string[]> {
  if (r.outcomesCount === 0) return [];
  const list = await ctx.app.services.runTasks.listOutcomes(r.id, { page: { offset: 0, limit: RESULT_LIMITS.outcomes } });
  return list.items.map((o) => o.id);
}

const resultResource = async (ctx: RouteContext, r: TaskResultView, extra: { deliveryAttempts?: string[] } = {}) =>
  ctx.app.jsonapi.resource("task-results", { ...resultData(r, await outcomeIds(ctx, r)), ...agentData(await ctx.app.services.runTasks.agentFacts(r)), ...extra });

/** `permissions` follow the caller (D21); `can-override-tasks` also needs option `overridableTasks`. */
export async function stageData(ctx: RouteContext, stage: TaskStageView, target: AuthTarget) {
  const results = await ctx.app.services.runTasks.listResults(stage.id);
  const canOverride = await ctx.app.authorizer(ctx.principal, "runs:override", target);
  return {
    id: stage.id,
    status: stage.status,
    stage: stage.stage,
    statusTimestamps: stage.statusTimestamps,
    createdAt: stage.createdAt,
    updatedAt: stage.updatedAt,
    permissions: {
      "can-override-policy": canOverride,
      "can-override-tasks": canOverride && ctx.app.services.runTasks.settings.overridableTasks,
      "can-override": canOverride,
    },
    actions: { "is-overridable": stage.status === "awaiting_override" },
    run: stage.runId,
    taskResults: results.map((r) => r.id),
    policyEvaluations: [],
    results,
  };
}

type StageData = Awaited<ReturnType<typeof stageData>>;

/**
 * What `include` adds to one stage or a page of them (D8, the list as one stage): the run and its
 * workspace once each (all stages of a list share them), and every result of every stage.
 * `policy-evaluations`: runplane evaluates no policies, so nothing is ever included for it.
 */
async function stagesIncluded(ctx: RouteContext, stages: readonly TaskStageView[], data: readonly StageData[]): Promise<JsonApiDocument[]> {
  const includes = ctx.query.includes;
  const included: JsonApiDocument[] = [];
  const first = stages[0];
  if (first && includes.has("run")) {
    const run = await ctx.app.services.runTasks.getRun(first.runId);
    // The whole run, as `GET /runs/:id` writes it (D24).
    if (run) included.push((await runResourceOf(ctx, run)).data);
  }
  if (first && includes.has("run.workspace")) {
    const workspace = await workspaceResource(ctx.app, first.workspaceId);
    if (workspace) included.push(workspace);
  }
  if (includes.has("task-results")) {
    for (const r of data.flatMap((d) => d.results)) included.push((await resultResource(ctx, r)).data as JsonApiDocument);
  }
  return included;
}

async function stageDocument(ctx: RouteContext, stage: TaskStageView, target: AuthTarget): Promise<JsonApiDocument> {
  const data = await stageData(ctx, stage, target);
  const doc = ctx.app.jsonapi.resource("task-stages", data);
  if (ctx.query.includes.size === 0) return doc;
  return { ...doc, included: await stagesIncluded(ctx, [stage], [data]) };
}

const outcomeData = (o: OutcomeView) => ({
  id: o.id,
  outcomeId: o.outcomeId,
  description: o.description,
  url: o.url,
  tags: toReadTags(o.tags),
  createdAt: o.createdAt,
  taskResult: o.taskResultId,
});

/** decision D18: `links.body` only when the outcome has a body. */
function withBodyLink(basePath: string, resource: Record<string, unknown>, outcome: OutcomeView): void {
  if (outcome.body === null) return;
  const links = (resource.links ?? (resource.links = {})) as Record<string, unknown>;
  links.body = `${basePath}/task-result-outcomes/${seg(outcome.id)}/body`;
}

const loadStage = (ctx: RouteContext) => authorizedIn(ctx, () => ctx.app.services.runTasks.getStageById(ctx.params.task_stage_id!));
const loadResult = (ctx: RouteContext) => authorizedIn(ctx, () => ctx.app.services.runTasks.getResult(ctx.params.task_result_id!));
async function loadOutcome(ctx: RouteContext): Promise<OutcomeView> {
  const outcome = await ctx.app.services.runTasks.getOutcome(ctx.params.outcome_id!);
  if (!outcome) throw notFound();
  await authorizedIn(ctx, () => ctx.app.services.runTasks.getResult(outcome.taskResultId));
  return outcome;
}

export const taskStageRoutes: Route[] = [
  {
    method: "GET",
    path: "/runs/:run_id/task-stages",
    auth: "principal",
    // The same includes as one stage (D8), `include=task_results` among them.
    query: { page: "always", include: STAGE_INCLUDES },
    async handle(ctx) {
      const { record: run, target } = await authorizedIn(ctx, () => ctx.app.services.runTasks.getRun(ctx.params.run_id!));
      const page = ctx.query.page!;
      const result = await ctx.app.services.runTasks.listStages(run.id, toPageRequest(page));
      const items = await Promise.all(result.items.map((stage) => stageData(ctx, stage, target)));
      const options = { url: ctx.url, pagination: { ...page, total: result.total } };
      const doc = ctx.app.jsonapi.collection("task-stages", items, options);
      if (ctx.query.includes.size === 0) return { status: 200, document: doc };
      return { status: 200, document: { ...doc, included: await stagesIncluded(ctx, result.items, items) } };
    },
  },
  {
    method: "GET",
    path: "/task-stages/:task_stage_id",
    auth: "principal",
    query: { include: STAGE_INCLUDES },
    async handle(ctx) {
      const { record: stage, target } = await loadStage(ctx);
      return { status: 200, document: await stageDocument(ctx, stage, target) };
    },
  },
  {
    method: "POST",
    path: "/task-stages/:task_stage_id/actions/override",
    auth: "principal",
    // The answer is the stage document, so it takes the stage's includes (D8, D30).
    query: { include: STAGE_INCLUDES },
    async handle(ctx) {
      const { record: stage, target } = await loadStage(ctx);
      const comment = overrideComment(ctx.body);
      const overridden = await ctx.app.services.runTasks.override(stage.id, comment);
      // decision D3: 200 with the stage document.
      return { status: 200, document: await stageDocument(ctx, overridden, target) };
    },
  },
  {
    method: "GET",
    path: "/task-results/:task_result_id",
    auth: "principal",
    query: { include: RESULT_INCLUDES },
    async handle(ctx) {
      const { record: result, target } = await loadResult(ctx);
      if (!ctx.query.includes.has("delivery-attempts")) return { status: 200, document: await resultResource(ctx, result) };
      const attempts = await includedAttempts(ctx, result.id, target);
      const doc = await resultResource(ctx, result, { deliveryAttempts: attempts.ids });
      return { status: 200, document: { ...doc, included: attempts.resources } };
    },
  },
  {
    // decision D17: authenticated by the result's access token, not by an API principal.
    method: "PATCH",
    path: "/task-results/:task_result_id/callback",
    auth: "custom",
    bodyLimit: 5 * 1024 * 1024,
    // decision D26: the token is checked before the body is read, so no unauthenticated upload is buffered.
    deferBody: true,
    async handle(ctx) {
      await ctx.app.services.runTasks.receiveCallback(ctx.params.task_result_id!, bearerToken(ctx.request), ctx.readBody);
      return { status: 200 };
    },
  },
  {
    method: "GET",
    path: "/task-results/:task_result_id/outcomes",
    auth: "principal",
    query: { page: "always", filters: [{ name: "filter[severity]" }, { name: "filter[status]" }], sort: ["severity"] },
    async handle(ctx) {
      const { record: result } = await loadResult(ctx);
      const page = ctx.query.page!;
      const { "filter[severity]": severity, "filter[status]": status } = ctx.query.filters;
      const list = await ctx.app.services.runTasks.listOutcomes(result.id, {
        page: toPageRequest(page),
        ...(severity === undefined ? {} : { severity }),
        ...(status === undefined ? {} : { status }),
        ...(ctx.query.sort === "severity" ? { sort: "severity" as const } : {}),
      });
      const doc = ctx.app.jsonapi.collection("task-result-outcomes", list.items.map(outcomeData), {
        url: ctx.url,
        pagination: { ...page, total: list.total },
      });
      (doc.data as Record<string, unknown>[]).forEach((resource, i) => withBodyLink(ctx.app.basePath, resource, list.items[i]!));
      return { status: 200, document: doc };
    },
  },
  {
    method: "GET",
    path: "/task-result-outcomes/:outcome_id",
    auth: "principal",
    async handle(ctx) {
      const outcome = await loadOutcome(ctx);
      const doc = ctx.app.jsonapi.resource("task-result-outcomes", outcomeData(outcome));
      withBodyLink(ctx.app.basePath, doc.data as Record<string, unknown>, outcome);
      return { status: 200, document: doc };
    },
  },
  {
    method: "GET",
    path: "/task-result-outcomes/:outcome_id/body",
    auth: "principal",
    async handle(ctx) {
      const outcome = await loadOutcome(ctx);
      if (outcome.body === null) throw notFound();
      return { status: 200, text: outcome.body, contentType: "text/markdown; charset=utf-8" };
    },
  },
];
