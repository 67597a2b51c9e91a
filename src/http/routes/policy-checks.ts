import { policyChecksOf } from "../run-providers.js";
import { policyCheckData } from "../run-documents.js";
import type { Route } from "../types.js";
import { loadRun } from "./run-read-support.js";

/**
 * `GET /runs/:id/policy-checks` (issue 27): the host's policy checks of the run (option
 * `runs.policyChecks`), paged like every list (D7); an empty list when the host gives none, since
 * runplane evaluates no policies itself.
 */
export const policyCheckRoutes: Route[] = [
  {
    method: "GET",
    path: "/runs/:run_id/policy-checks",
    auth: "principal",
    query: { page: "always" },
    async handle(ctx) {
      const { record: run } = await loadRun(ctx);
      const page = ctx.query.page!;
      const checks = await policyChecksOf(ctx.app.runs, ctx.app.logger, run);
      const offset = (page.number - 1) * page.size;
      const items = checks.slice(offset, offset + page.size).map((c) => policyCheckData(c, run.id, ctx.app.dialect));
      return { status: 200, document: ctx.app.jsonapi.collection("policy-checks", items, { url: ctx.url, pagination: { ...page, total: checks.length } }) };
    },
  },
];
