import type { CheckedRunDetails } from "../../schemas/run-details.js";
import type { RunRecord } from "../../schemas/run-task-records.js";
import type { JsonApiDocument } from "../jsonapi.js";
import type { AuthTarget, Route, RouteContext } from "../types.js";
import { configurationVersionResource, creatorResource, ingressAttributesResource } from "./run-includes.js";
import { applyResource, loadRun, planResource, runResourceOf } from "./run-read-support.js";
import { workspaceResource } from "./run-task-support.js";
import { stageData } from "./task-stages.js";

/**
 * `GET /runs/:id` (D24): the run as HCP Terraform writes it, from what runplane stores and
 * what the host provides (option `runs`), with its task stages, plan and apply as relationships.
 * A trailing slash is the same route (the router ignores it everywhere).
 */

/**
 * decision D8: both spellings of every value of go-tfe's `RunIncludeOpt`: none is 400.
 * `cost_estimate` includes nothing: runplane has no cost estimates, so the relation's data is null,
 * as HCP Terraform answers for a run without one (docs/reference/includes.md).
 */
export const RUN_INCLUDES = {
  task_stages: "task-stages",
  "task-stages": "task-stages",
  plan: "plan",
  apply: "apply",
  workspace: "workspace",
  created_by: "created-by",
  "created-by": "created-by",
  cost_estimate: "cost-estimate",
  "cost-estimate": "cost-estimate",
  configuration_version: "configuration-version",
  "configuration-version": "configuration-version",
  "configuration_version.ingress_attributes": "configuration-version.ingress-attributes",
  "configuration-version.ingress-attributes": "configuration-version.ingress-attributes",
  // go-tfe's newest RunIncludeOpt (beta): HCP's Terraform policy evaluations; runplane evaluates
  // none, so it includes nothing (D8: accepted, never 400).
  tf_policy_evaluations: "tf-policy-evaluations",
  "tf-policy-evaluations": "tf-policy-evaluations",
} as const;

/** The host-related resources of a run the caller asked for: creator, configuration version, its ingress attributes. */
async function relatedOf(ctx: RouteContext, run: RunRecord): Promise<JsonApiDocument[]> {
  const includes = ctx.query.includes;
  const out: (JsonApiDocument | null)[] = [];
  if (includes.has("created-by")) out.push(await creatorResource(ctx, run));
  if (includes.has("configuration-version")) out.push(configurationVersionResource(ctx, run));
  if (includes.has("configuration-version.ingress-attributes")) out.push(ingressAttributesResource(ctx, run));
  return out.filter((r): r is JsonApiDocument => r !== null);
}

/** The resources `include` asks for of one run (D8): also what each run of a list includes (D49). */
export async function runIncluded(ctx: RouteContext, run: RunRecord, target: AuthTarget, details: CheckedRunDetails | null): Promise<JsonApiDocument[]> {
  const { app } = ctx;
  const includes = ctx.query.includes;
  const included: JsonApiDocument[] = [];
  if (includes.has("task-stages")) {
    const { items } = await app.services.runTasks.listStages(run.id);
    for (const stage of items) included.push(app.jsonapi.resource("task-stages", await stageData(ctx, stage, target)).data as JsonApiDocument);
  }
  if (includes.has("plan")) included.push(planResource(ctx, run, details));
  if (includes.has("apply")) included.push(applyResource(ctx, run, details));
  if (includes.has("workspace")) {
    const workspace = await workspaceResource(app, run.workspaceId);
    if (workspace) included.push(workspace);
  }
  included.push(...(await relatedOf(ctx, run)));
  return included;
}

async function runDocument(ctx: RouteContext, run: RunRecord, target: AuthTarget): Promise<JsonApiDocument> {
  const { data, details } = await runResourceOf(ctx, run);
  if (ctx.query.includes.size === 0) return { data };
  return { data, included: await runIncluded(ctx, run, target, details) };
}

export const runRoutes: Route[] = [
  {
    method: "GET",
    path: "/runs/:run_id",
    auth: "principal",
    query: { include: RUN_INCLUDES },
    async handle(ctx) {
      const { record: run, target } = await loadRun(ctx);
      return { status: 200, document: await runDocument(ctx, run, target) };
    },
  },
];
