import { notFound } from "../../errors.js";
import type { JsonApiDocument } from "../jsonapi.js";
import type { CheckedPolicyCheck } from "../../schemas/run-details.js";
import type { RunRecord } from "../../schemas/run-task-records.js";
import { policyCheckOutputOf, policyCheckRunOf, policyChecksOf } from "../run-providers.js";
import { policyCheckData } from "../run-documents.js";
import type { Route, RouteContext } from "../types.js";
import { loadRun, runResourceOf } from "./run-read-support.js";
import { authorizedIn, workspaceResource } from "./run-task-support.js";

/**
 * `GET /runs/:id/policy-checks`: the host's policy checks of the run (option
 * `runs.policyChecks`), paged like every list (D7); an empty list when the host gives none, since
 * runplane evaluates no policies itself. `GET /policy-checks/:id` reads one: the host
 * names its run (option `runs.policyCheckRun`, D36), read and authorized like the list.
 */

/** decision D8: go-tfe's `PolicyCheckIncludeOpt` names (HCP's "available related resources"). */
export const POLICY_CHECK_INCLUDES = { run: "run", "run.workspace": "run.workspace" } as const;

/** The run and its workspace, when asked for: the caller may read both, since it reads the run. */
async function includedOf(ctx: RouteContext, run: Parameters<typeof runResourceOf>[1]): Promise<JsonApiDocument[]> {
  const out: JsonApiDocument[] = [];
  if (ctx.query.includes.has("run")) out.push((await runResourceOf(ctx, run)).data);
  if (ctx.query.includes.has("run.workspace")) {
    const workspace = await workspaceResource(ctx.app, run.workspaceId);
    if (workspace) out.push(workspace);
  }
  return out;
}

/** The check of `:policy_check_id` and its run (D36): the host names the run, read and authorized like the list. */
async function loadCheck(ctx: RouteContext): Promise<{ run: RunRecord; check: CheckedPolicyCheck }> {
  const { app } = ctx;
  const id = ctx.params.policy_check_id!;
  // No host id is longer (PolicyCheckDetailsSchema): such an id is not asked of the host.
  const runId = id.length > 200 ? null : await policyCheckRunOf(app.runs, app.logger, id);
  const { record: run } = await authorizedIn(ctx, async () => (runId === null ? null : app.services.runTasks.getRun(runId)));
  const check = (await policyChecksOf(app.runs, app.logger, run)).find((c) => c.id === id);
  if (!check) throw notFound();
  return { run, check };
}

/**
 * decision D49: a summary of a check's result in the words of Sentinel's output, for a host that
 * gives no output of its own (`runs.policyCheckOutput`).
 */
export function policyCheckSummary(check: CheckedPolicyCheck): string {
  const r = check.result;
  if (!r) return `Policy check ${check.id}: ${check.status}.\n`;
  const evaluated = r.passed + r.totalFailed;
  return `Sentinel Result: ${String(r.result)}\n\n${evaluated} policies evaluated: ${r.passed} passed, ${r.totalFailed} failed (${r.hardFailed} hard-mandatory, ${r.softFailed} soft-mandatory, ${r.advisoryFailed} advisory).\n`;
}

export const policyCheckRoutes: Route[] = [
  {
    method: "GET",
    path: "/runs/:run_id/policy-checks",
    auth: "principal",
    // go-tfe's PolicyCheckListOptions takes the same includes as the read (D8).
    query: { page: "always", include: POLICY_CHECK_INCLUDES },
    async handle(ctx) {
      const { record: run } = await loadRun(ctx);
      const page = ctx.query.page!;
      const checks = await policyChecksOf(ctx.app.runs, ctx.app.logger, run);
      const offset = (page.number - 1) * page.size;
      const items = checks.slice(offset, offset + page.size).map((c) => policyCheckData(c, run.id, ctx.app.dialect));
      const doc = ctx.app.jsonapi.collection("policy-checks", items, { url: ctx.url, pagination: { ...page, total: checks.length } });
      if (ctx.query.includes.size === 0) return { status: 200, document: doc };
      return { status: 200, document: { ...doc, included: await includedOf(ctx, run) } };
    },
  },
  {
    method: "GET",
    path: "/policy-checks/:policy_check_id",
    auth: "principal",
    query: { include: POLICY_CHECK_INCLUDES },
    async handle(ctx) {
      const { app } = ctx;
      const { run, check } = await loadCheck(ctx);
      const doc = app.jsonapi.resource("policy-checks", policyCheckData(check, run.id, app.dialect));
      if (ctx.query.includes.size === 0) return { status: 200, document: doc };
      return { status: 200, document: { ...doc, included: await includedOf(ctx, run) } };
    },
  },
  {
    method: "GET",
    path: "/policy-checks/:policy_check_id/output",
    auth: "principal",
    // go-tfe's PolicyChecks.Logs reads the check until it is neither pending nor queued, then this.
    async handle(ctx) {
      const { run, check } = await loadCheck(ctx);
      const output = await policyCheckOutputOf(ctx.app.runs, ctx.app.logger, run, check);
      return { status: 200, text: output ?? policyCheckSummary(check), contentType: "text/plain; charset=utf-8" };
    },
  },
];
