import { afterEach, describe, expect, it } from "vitest";
import type { RunplaneOptions } from "../../src/index.js";
import { STORAGES } from "../helpers/storages.js";
import { attachTask, createTask, runTaskApp, startedRun, type RunTaskApp } from "../helpers/run-tasks.js";

/**
 * Decision D8: every include value go-tfe's option types name for the routes runplane serves
 * is answered, never 400 (docs/reference/includes.md). The includes are HTTP-layer work over
 * what every adapter stores alike, so one adapter suffices.
 */

/** go-tfe `RunIncludeOpt` (run.go), every value. */
const RUN_INCLUDE_OPTS = ["plan", "apply", "created_by", "cost_estimate", "configuration_version", "configuration_version.ingress_attributes", "workspace", "task_stages"];
const VCS = { branch: "main", repoUrl: "https://git.example/acme/infra", commitUrl: "https://git.example/acme/infra/commit/abc123", commitHash: "abc123", pullRequestUrl: null };

describe.each(STORAGES.slice(0, 1))("documented includes ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = (options: Partial<RunplaneOptions> = {}): Promise<RunTaskApp> => runTaskApp(setup, (d) => (dispose = d), options);

  async function run(a: RunTaskApp, input: Record<string, unknown> = {}) {
    await attachTask(a, await createTask(a, "scan"), "mandatory", ["post_plan"]);
    const created = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go", createdBy: "user-owner", ...input });
    return created.run;
  }
  const kinds = (included: any[] | undefined) => (included ?? []).map((r: any) => `${r.type}:${r.id}`);

  it("answers every RunIncludeOpt value of go-tfe on GET /runs/:id, alone and all at once, in either spelling", async () => {
    const a = await app();
    const r = await run(a, { vcs: VCS });
    for (const include of [...RUN_INCLUDE_OPTS, RUN_INCLUDE_OPTS.join(","), RUN_INCLUDE_OPTS.map((v) => v.replaceAll("_", "-")).join(",")]) {
      const res = await a.call("GET", `/api/v2/runs/${r.id}?include=${include}`);
      expect(res.status, include).toBe(200);
    }
    const all = await a.call("GET", `/api/v2/runs/${r.id}?include=${RUN_INCLUDE_OPTS.join(",")}`);
    expect(kinds(all.json.included)).toStrictEqual([
      expect.stringMatching(/^task-stages:ts-/),
      `plans:${r.planId}`,
      `applies:${r.applyId}`,
      "workspaces:ws-a",
      "users:user-owner",
      "configuration-versions:cv-1",
      "ingress-attributes:ia-cv-1",
    ]);
  });

  it("includes the creator as a user of the directory, and nothing when the directory does not know them", async () => {
    const a = await app();
    const r = await run(a);
    const res = await a.call("GET", `/api/v2/runs/${r.id}?include=created_by`);
    expect(res.json.data.relationships["created-by"].data).toStrictEqual({ type: "users", id: "user-owner" });
    expect(res.json.included).toStrictEqual([{ type: "users", id: "user-owner", attributes: { username: "owner" } }]);
    const stranger = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-2", createdBy: "user-gone" });
    expect((await a.call("GET", `/api/v2/runs/${stranger.run.id}?include=created_by`)).json.included).toStrictEqual([]);
    const nobody = await a.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-3" });
    const none = await a.call("GET", `/api/v2/runs/${nobody.run.id}?include=created-by`);
    expect(none.json.data.relationships["created-by"].data).toBeNull();
    expect(none.json.included).toStrictEqual([]);
  });

  it("includes the configuration version, and its ingress attributes from the run's VCS data", async () => {
    const a = await app();
    const r = await run(a, { vcs: VCS, isSpeculative: true });
    const res = await a.call("GET", `/api/v2/runs/${r.id}?include=configuration_version.ingress_attributes`);
    expect(res.json.included).toStrictEqual([
      {
        type: "configuration-versions",
        id: "cv-1",
        // decision D49: every attribute go-tfe's ConfigurationVersion names, as its own route writes it.
        attributes: {
          "auto-queue-runs": false,
          error: "",
          "error-message": "",
          source: "tfe-api",
          speculative: true,
          provisional: false,
          status: "uploaded",
          "status-timestamps": { "uploaded-at": expect.stringMatching(/\+00:00$/) },
          "upload-url": null,
        },
        relationships: { "ingress-attributes": { data: { type: "ingress-attributes", id: "ia-cv-1" } } },
        links: { self: "/api/v2/configuration-versions/cv-1" },
      },
      {
        type: "ingress-attributes",
        id: "ia-cv-1",
        attributes: { branch: "main", "commit-sha": "abc123", "commit-url": VCS.commitUrl, "pull-request-url": "", "is-pull-request": false },
      },
    ]);
  });

  it("writes a null ingress relation and includes no ingress attributes for a run without VCS data", async () => {
    const a = await app();
    const r = await run(a);
    const res = await a.call("GET", `/api/v2/runs/${r.id}?include=configuration_version,configuration_version.ingress_attributes`);
    expect(kinds(res.json.included)).toStrictEqual(["configuration-versions:cv-1"]);
    expect(res.json.included[0].relationships["ingress-attributes"].data).toBeNull();
  });

  it("answers cost_estimate as HCP does for a run without one: a null relation, nothing included", async () => {
    const a = await app();
    const r = await run(a);
    const res = await a.call("GET", `/api/v2/runs/${r.id}?include=cost_estimate`);
    expect(res.status).toBe(200);
    expect(res.json.data.relationships["cost-estimate"].data).toBeNull();
    expect(res.json.included).toStrictEqual([]);
  });

  it("includes nothing for a caller who may not read the run: 404 before any include is looked at", async () => {
    const a = await app();
    const r = await run(a);
    for (const path of [`runs/${r.id}?include=created_by,configuration_version,workspace`, `runs/${r.id}/task-stages?include=run.workspace`, `runs/${r.id}/policy-checks?include=run`]) {
      const res = await a.call("GET", `/api/v2/${path}`, { token: a.otherOrgToken });
      expect(res.status, path).toBe(404);
      expect(res.json.included).toBeUndefined();
    }
  });

  it("includes the run and its workspace on a run's policy check list (go-tfe PolicyCheckListOptions)", async () => {
    const a = await app({ runs: { policyChecks: () => [{ id: "polchk-1", status: "passed" }, { id: "polchk-2", status: "errored" }] } });
    const r = await run(a);
    const res = await a.call("GET", `/api/v2/runs/${r.id}/policy-checks?include=run.workspace`);
    expect(res.status).toBe(200);
    expect(kinds(res.json.data)).toStrictEqual(["policy-checks:polchk-1", "policy-checks:polchk-2"]);
    expect(kinds(res.json.included)).toStrictEqual([`runs:${r.id}`, "workspaces:ws-a"]);
    expect((await a.call("GET", `/api/v2/runs/${r.id}/policy-checks?include=nope`)).status).toBe(400);
  });

  it("includes task results, the run and its workspace on a run's task stage list, once each", async () => {
    const a = await app();
    const { runId, resultIds } = await startedRun(a, ["mandatory", "advisory"]);
    const res = await a.call("GET", `/api/v2/runs/${runId}/task-stages?include=task_results,run.workspace`);
    expect(res.status).toBe(200);
    expect(kinds(res.json.included).sort()).toStrictEqual([`runs:${runId}`, ...resultIds.map((id) => `task-results:${id}`), "workspaces:ws-a"].sort());
    const results = res.json.included.filter((x: any) => x.type === "task-results");
    // Whole results, as `GET /task-results/:id` writes them, not linkage alone.
    expect(results.map((x: any) => x.attributes["task-name"]).sort()).toStrictEqual(["task0", "task1"]);
    expect((await a.call("GET", `/api/v2/runs/${runId}/task-stages`)).json.included).toBeUndefined();
    // go-tfe's TaskStageIncludeOpt plus HCP's OpenAPI `cost_estimate` (nothing: runplane has none).
    const stageId = res.json.data[0].id;
    for (const include of ["task_results", "policy_evaluations", "cost_estimate", "run", "run.workspace"]) {
      expect((await a.call("GET", `/api/v2/task-stages/${stageId}?include=${include}`)).status, include).toBe(200);
    }
    expect((await a.call("GET", `/api/v2/task-stages/${stageId}?include=cost_estimate,policy_evaluations`)).json.included).toStrictEqual([]);
    const bad = await a.call("GET", `/api/v2/runs/${runId}/task-stages?include=nope`);
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].detail).toContain("Invalid include parameter");
  });
});
