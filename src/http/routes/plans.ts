import type { RunRecord } from "../../schemas/run-task-records.js";
import { runDetailsOf } from "../run-providers.js";
import type { Route, RouteContext, RouteResult } from "../types.js";
import { readableRun } from "./artifacts.js";
import { applyResource, loadRun, loadRunForToken, planResource } from "./run-read-support.js";

/**
 * A run's plan and apply (D24): `GET /runs/:id/plan`, `/plans/:id`, `/runs/:id/apply` and
 * `/applies/:id`. Their status and resource counts are the host's (option `runs`); `log-read-url`
 * points at `/plans/:id/log` and `/applies/:id/log` when the host provides logs. A result's access
 * token reads its own run's plan (as it reads the plan JSON, D24), never the apply.
 */

async function planAnswer(ctx: RouteContext, run: RunRecord): Promise<RouteResult> {
  return { status: 200, document: { data: planResource(ctx, run, await runDetailsOf(ctx.app.runs, ctx.app.logger, run)) } };
}
async function applyAnswer(ctx: RouteContext, run: RunRecord): Promise<RouteResult> {
  return { status: 200, document: { data: applyResource(ctx, run, await runDetailsOf(ctx.app.runs, ctx.app.logger, run)) } };
}

export const planRoutes: Route[] = [
  {
    method: "GET",
    path: "/runs/:run_id/plan",
    auth: "custom",
    handle: async (ctx) => planAnswer(ctx, await loadRunForToken(ctx)),
  },
  {
    method: "GET",
    path: "/plans/:plan_id",
    auth: "custom",
    handle: async (ctx) => planAnswer(ctx, await readableRun(ctx, "plan", ctx.params.plan_id!, true)),
  },
  {
    method: "GET",
    path: "/runs/:run_id/apply",
    auth: "principal",
    handle: async (ctx) => applyAnswer(ctx, (await loadRun(ctx)).record),
  },
  {
    method: "GET",
    path: "/applies/:apply_id",
    auth: "custom",
    handle: async (ctx) => applyAnswer(ctx, await readableRun(ctx, "apply", ctx.params.apply_id!, false)),
  },
];
