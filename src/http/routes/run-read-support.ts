import { runEventsOf, type RunEventStage } from "../../domain/run-events.js";
import { notFound } from "../../errors.js";
import type { CheckedRunDetails } from "../../schemas/run-details.js";
import type { RunRecord } from "../../schemas/run-task-records.js";
import type { JsonApiDocument } from "../jsonapi.js";
import { policyChecksOf, runDetailsOf } from "../run-providers.js";
import { phaseData, runData } from "../run-documents.js";
import type { AuthTarget, RouteContext } from "../types.js";
import { verifiedRun } from "./artifacts.js";
import { authorizedIn, workspaceTarget } from "./run-task-support.js";

/** What the read routes of a run share (D24): loading and authorizing, and the plan and apply resources. */

const seg = encodeURIComponent;

/** A run's stages in run order, each with its results: what its run events are made of (D36). */
export async function stagesWithResults(ctx: RouteContext, run: RunRecord): Promise<RunEventStage[]> {
  const { items } = await ctx.app.services.runTasks.listStages(run.id);
  return Promise.all(items.map(async (stage) => ({ ...stage, results: await ctx.app.services.runTasks.listResults(stage.id) })));
}

/** The run of `:run_id` for an API credential with `runs >= read` on its workspace (D21), else 404 (D4). */
export const loadRun = (ctx: RouteContext): Promise<{ record: RunRecord; target: AuthTarget }> =>
  authorizedIn(ctx, () => ctx.app.services.runTasks.getRun(ctx.params.run_id!));

/**
 * The run of `:run_id` on a route a result's access token may read too (its own run's plan, D24):
 * a token that verifies reads only its own run (404 for another), anything else must be an API
 * credential with `runs >= read` (401 when it is none).
 */
export async function loadRunForToken(ctx: RouteContext): Promise<RunRecord> {
  const verified = await verifiedRun(ctx);
  if (verified) {
    if (verified.id !== ctx.params.run_id) throw notFound();
    return verified;
  }
  await ctx.authenticate();
  const run = await ctx.app.services.runTasks.getRun(ctx.params.run_id!);
  if (!run) throw notFound();
  await ctx.authorize(await workspaceTarget(ctx.app, run.organization, run.workspaceId));
  return run;
}

/**
 * decision D32: `log-read-url`, absolute (go-tfe's log reader GETs it as it is, replacing only its
 * query) and carrying its own credential in the path: integrations send no Authorization header.
 * Null without the host's log provider, or when the keyring derives no MAC keys.
 */
function logUrl(ctx: RouteContext, run: RunRecord, kind: "plan" | "apply"): string | null {
  if (!ctx.app.artifacts?.[kind === "plan" ? "planLog" : "applyLog"]) return null;
  const capability = ctx.app.services.logs.issue(run.id, kind);
  return capability === null ? null : `${ctx.app.services.runTasks.settings.publicUrl}${ctx.app.basePath}/logs/${capability}`;
}

/** The plan resource: `log-read-url` (D32) only with `artifacts.planLog`, `links.json-output` only with `artifacts.planJson`. */
export function planResource(ctx: RouteContext, run: RunRecord, details: CheckedRunDetails | null): JsonApiDocument {
  const { app } = ctx;
  const log = logUrl(ctx, run, "plan");
  const data = app.jsonapi.resource("plans", phaseData(run.planId, details?.plan, log, app.dialect, true)).data as JsonApiDocument;
  if (app.artifacts?.planJson) (data.links as Record<string, string>)["json-output"] = `${app.basePath}/plans/${seg(run.planId)}/json-output`;
  return data;
}

/** The apply resource: `log-read-url` (D32) only with `artifacts.applyLog`. */
export function applyResource(ctx: RouteContext, run: RunRecord, details: CheckedRunDetails | null): JsonApiDocument {
  const { app } = ctx;
  const log = logUrl(ctx, run, "apply");
  return app.jsonapi.resource("applies", phaseData(run.applyId, details?.apply, log, app.dialect, false)).data as JsonApiDocument;
}

/**
 * The run resource (`GET /runs/:id`, and a task stage's `include=run`): what runplane stores, what
 * the host gives (option `runs`), and the ids of its stages, comments and policy checks. Resolves
 * the host's details too, for the plan and apply a caller includes.
 */
export async function runResourceOf(ctx: RouteContext, run: RunRecord): Promise<{ data: JsonApiDocument; details: CheckedRunDetails | null }> {
  const { app } = ctx;
  const [details, stages, comments, checks] = await Promise.all([
    runDetailsOf(app.runs, app.logger, run),
    stagesWithResults(ctx, run),
    app.services.comments.list(run.id),
    policyChecksOf(app.runs, app.logger, run),
  ]);
  const links = {
    stageIds: stages.map((s) => s.id),
    commentIds: comments.items.map((c) => c.id),
    policyCheckIds: checks.map((c) => c.id),
    // decision D49: go-tfe's Run.RunEvents, the ids `GET /runs/:id/run-events` answers.
    runEventIds: runEventsOf(run, stages, comments.items).map((e) => e.id),
  };
  return { data: app.jsonapi.resource("runs", runData(run, details, links, app.dialect)).data as JsonApiDocument, details };
}
