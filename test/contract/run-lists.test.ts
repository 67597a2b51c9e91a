import { afterEach, describe, expect, it } from "vitest";
import type { ArtifactRun, RunDetails } from "../../src/index.js";
import { listDocument, problems } from "./go-tfe-shapes.js";
import { startContractServer, type ContractServer } from "./harness.js";

/**
 * decision D49: go-tfe's `Runs.List` (`GET /workspaces/:id/runs`, RunListOptions) and
 * `Runs.ListForOrganization` (`GET /organizations/:name/runs`, RunListForOrganizationOptions) as
 * they call the API: HCP's pagination, the filters and searches that make sense for runs a host
 * reports, every `RunIncludeOpt`, and `runs:read` on each run.
 */

const DETAILS: Record<string, RunDetails> = {
  first: { status: "applied", source: "tfe-api" },
  second: { status: "errored", source: "tfe-ui" },
  third: { status: "planning", source: "tfe-api", isDestroy: true },
};

describe("go-tfe lists runs", () => {
  let server: ContractServer | undefined;
  afterEach(async () => server?.close());

  /** Three runs of ws-a (first oldest), one of ws-b, and one of ws-c in another project. */
  async function seeded() {
    const s = (server = await startContractServer({
      runs: { details: (run: ArtifactRun) => DETAILS[run.message] ?? { status: "pending" } },
      artifacts: { planLog: () => "plan", applyLog: () => "apply" },
    }));
    const { runplane } = s.app;
    await runplane.directory.projects.create({ id: "prj-b", name: "beta", organization: "acme" });
    await runplane.directory.workspaces.create({ id: "ws-c", name: "gamma-ws", organization: "acme", projectId: "prj-b" });
    const vcs = (commitHash: string) => ({ branch: "main", repoUrl: null, commitUrl: null, commitHash, pullRequestUrl: null });
    const make = async (workspaceId: string, message: string, extra: Record<string, unknown> = {}) =>
      (await runplane.runTasks.createRun({ workspaceId, configurationVersionId: `cv-${message}`, message, createdBy: "user-owner", ...extra })).run;
    const first = await make("ws-a", "first", { vcs: vcs("aaa111") });
    const second = await make("ws-a", "second", { createdBy: "user-dev", vcs: vcs("bbb222") });
    const third = await make("ws-a", "third", { isSpeculative: true });
    const other = await make("ws-b", "other");
    const gamma = await make("ws-c", "gamma");
    return { s, first, second, third, other, gamma };
  }

  const ids = (doc: any): string[] => doc.data.map((d: any) => d.id);

  it("Runs.List: the workspace's runs, newest first, as go-tfe decodes them, with HCP's pagination", async () => {
    const { s, first, second, third } = await seeded();
    const all = await s.call("GET", "/workspaces/ws-a/runs");
    expect(all.status).toBe(200);
    expect(problems(listDocument("Run"), all.json)).toStrictEqual([]);
    expect(ids(all.json)).toStrictEqual([third.id, second.id, first.id]);
    expect(all.json.meta.pagination).toMatchObject({ "current-page": 1, "total-count": 3, "total-pages": 1 });
    const page = await s.call("GET", "/workspaces/ws-a/runs?page%5Bnumber%5D=2&page%5Bsize%5D=1");
    expect(ids(page.json)).toStrictEqual([second.id]);
    expect(page.json.meta.pagination).toMatchObject({ "current-page": 2, "prev-page": 1, "next-page": 3, "total-pages": 3, "total-count": 3 });
  });

  it("filters by status, source and operation, and searches by user, commit and words", async () => {
    const { s, first, second, third } = await seeded();
    const list = async (query: string) => ids((await s.call("GET", `/workspaces/ws-a/runs?${query}`)).json);
    expect(await list("filter%5Bstatus%5D=errored,applied")).toStrictEqual([second.id, first.id]);
    expect(await list("filter%5Bsource%5D=tfe-ui")).toStrictEqual([second.id]);
    expect(await list("filter%5Boperation%5D=plan_only")).toStrictEqual([third.id]);
    expect(await list("filter%5Boperation%5D=plan_and_apply")).toStrictEqual([second.id, first.id]);
    expect(await list("search%5Buser%5D=dev")).toStrictEqual([second.id]);
    expect(await list("search%5Bcommit%5D=aaa111")).toStrictEqual([first.id]);
    expect(await list("search%5Bbasic%5D=THIR")).toStrictEqual([third.id]);
    expect(await list(`search%5Bbasic%5D=${first.id}`)).toStrictEqual([first.id]);
    // search[user] takes priority over search[basic], as HCP documents.
    expect(await list("search%5Buser%5D=owner&search%5Bbasic%5D=second")).toStrictEqual([third.id, first.id]);
    const filtered = await s.call("GET", "/workspaces/ws-a/runs?filter%5Bstatus%5D=errored,applied&page%5Bsize%5D=1");
    expect(filtered.json.meta.pagination).toMatchObject({ "total-count": 2, "total-pages": 2 });
  });

  it("takes every RunIncludeOpt value go-tfe names, and includes them for each run", async () => {
    const { s, first } = await seeded();
    const res = await s.call("GET", "/workspaces/ws-a/runs?include=plan,apply,created_by,cost_estimate,configuration_version,configuration_version.ingress_attributes,workspace,task_stages,tf_policy_evaluations");
    expect(res.status).toBe(200);
    expect(problems(listDocument("Run"), res.json)).toStrictEqual([]);
    const included = (res.json.included as { type: string; id: string }[]).map((r) => `${r.type}:${r.id}`);
    expect(included).toEqual(expect.arrayContaining([`plans:${first.planId}`, `applies:${first.applyId}`, "users:user-owner", "users:user-dev", "workspaces:ws-a", "configuration-versions:cv-first", "ingress-attributes:ia-cv-first"]));
    // Each resource once.
    expect(new Set(included).size).toBe(included.length);
  });

  it("Runs.ListForOrganization: runs of every workspace the caller may read, newest first, with its filters", async () => {
    const { s, first, second, third, other, gamma } = await seeded();
    const all = await s.call("GET", "/organizations/acme/runs");
    expect(problems(listDocument("Run"), all.json)).toStrictEqual([]);
    expect(ids(all.json)).toStrictEqual([gamma.id, other.id, third.id, second.id, first.id]);
    expect(ids((await s.call("GET", "/organizations/acme/runs?filter%5Bworkspace_names%5D=beta-ws,gamma-ws")).json)).toStrictEqual([gamma.id, other.id]);
    expect(ids((await s.call("GET", "/organizations/acme/runs?filter%5Bstatus_group%5D=final")).json)).toStrictEqual([second.id, first.id]);
    expect(ids((await s.call("GET", "/organizations/acme/runs?filter%5Bstatus_group%5D=non_final&page%5Bsize%5D=2")).json)).toStrictEqual([gamma.id, other.id]);
    // runs:read on each run: the devs team reads project beta only.
    await s.app.runplane.teamProjects.create("prj-b", "team-devs", { access: "read" });
    expect(ids((await s.call("GET", "/organizations/acme/runs", { token: s.app.devToken })).json)).toStrictEqual([gamma.id]);
    expect((await s.call("GET", "/workspaces/ws-a/runs", { token: s.app.devToken })).status).toBe(404);
    expect((await s.call("GET", "/organizations/acme/runs", { token: s.app.otherOrgToken })).status).toBe(404);
    expect((await s.call("GET", "/workspaces/ws-missing/runs")).status).toBe(404);
  });

  it("refuses what it cannot filter on, saying so, never a list that ignores it", async () => {
    const { s } = await seeded();
    const pools = await s.call("GET", "/organizations/acme/runs?filter%5Bagent_pool_names%5D=pool");
    expect(pools.status).toBe(400);
    expect(pools.json.errors[0].detail).toMatch(/agent pool/);
    expect((await s.call("GET", "/organizations/acme/runs?filter%5Bstatus_group%5D=someday")).status).toBe(400);
    // D7: a page size over 100 is 422, as on every list.
    expect((await s.call("GET", "/workspaces/ws-a/runs?page%5Bsize%5D=101")).status).toBe(422);
    expect((await s.call("GET", "/workspaces/ws-a/runs?include=nonsense")).status).toBe(400);
  });
});
