import type { RunRecord } from "../../schemas/run-task-records.js";
import type { JsonApiDocument } from "../jsonapi.js";
import type { AuthTarget, Route, RouteContext } from "../types.js";
import { applyResource, loadRun, planResource, runResourceOf } from "./run-read-support.js";
import { workspaceResource } from "./run-task-support.js";
import { stageData } from "./task-stages.js";

/**
 * `GET /runs/:id` (issue 27): the run as HCP Terraform writes it, from what runplane stores and
 * what the host provides (option `runs`), with its task stages, plan and apply as relationships.
 * A trailing slash is the same route (the router ignores it everywhere).
 */

/** decision D8: both spellings; what go-tfe's `RunIncludeOpt` names and runplane can write. */
export const RUN_INCLUDES = {
  task_stages: "task-stages",
  "task-stages": "task-stages",
  plan: "plan",
  apply: "apply",
  workspace: "workspace",
} as const;

async function runDocument(ctx: RouteContext, run: RunRecord, target: AuthTarget): Promise<JsonApiDocument> {
  const { app } = ctx;
  const { data, details } = await runResourceOf(ctx, run);
  const includes = ctx.query.includes;
  if (includes.size === 0) return { data };
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
  return { data, included };
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
