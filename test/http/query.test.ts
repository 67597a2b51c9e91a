import { describe, expect, it } from "vitest";
import { parseQuery } from "../../src/http/query.js";
import { STAGE_INCLUDES } from "../../src/http/routes/run-task-support.js";

// decision D30: what the router makes of a query string before any route runs.
const q = (search: string) => new URLSearchParams(search);

describe("route query", () => {
  it("includes every resource along an included path, from either spelling", () => {
    expect([...parseQuery({ include: STAGE_INCLUDES }, q("include=run.workspace,task_results")).includes].sort()).toEqual(["run", "run.workspace", "task-results"]);
  });

  it("refuses an unknown include, an own-property name, a bad page, a sort or a missing required filter with the parameter named", () => {
    const cases: [Parameters<typeof parseQuery>[0], string, number, string][] = [
      [{ include: STAGE_INCLUDES }, "include=run,nope", 400, "include"],
      [{ include: STAGE_INCLUDES }, "include=constructor", 400, "include"],
      [{ page: "always" }, "page[size]=101", 422, "page[size]"],
      [{ page: "optional" }, "page[number]=0", 422, "page[number]"],
      [{ sort: ["severity"] }, "sort=severity&sort=name", 400, "sort"],
      [{ filters: [{ name: "filter[project][id]", required: true }] }, "filter[project][id]=", 400, "filter[project][id]"],
    ];
    for (const [spec, search, status, parameter] of cases) {
      expect(() => parseQuery(spec, q(search)), search).toThrow(expect.objectContaining({ status, items: [expect.objectContaining({ parameter })] }));
    }
  });

  it("ignores what a route does not declare, and pages an optional list only when asked", () => {
    expect(parseQuery({}, q("include=nope&sort=x&page[size]=abc&filter[a]=b"))).toEqual({ includes: new Set(), page: null, filters: {}, sort: undefined });
    expect(parseQuery({ page: "optional" }, q("")).page).toBeNull();
    expect(parseQuery({ page: "optional" }, q("page[size]=5")).page).toEqual({ number: 1, size: 5 });
  });
});
