import { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { ArtifactProviders } from "../../src/index.js";
import { STORAGES } from "../helpers/storages.js";
import { attachTask, callbackBody, createTask, deliverDue, payloadOf, runTaskApp, sendCallback, tokenOf, type RunTaskApp } from "../helpers/run-tasks.js";

const PLAN = { format_version: "1.2", resource_changes: [{ address: "null_resource.a", change: { actions: ["delete"] } }] };
const TARBALL = new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3]);

/** Providers that answer for every run and remember which runs they were asked about. */
const recordingProviders = (asked: string[] = []): ArtifactProviders => ({
  planJson: (run) => (asked.push(`plan ${run.id}`), PLAN),
  configurationVersion: (run) => (asked.push(`cv ${run.id}`), TARBALL),
});

describe.each(STORAGES)("artifact downloads for integrations, D24 ($name)", (setup) => {
  let dispose = () => {};
  afterEach(() => dispose());
  const app = (artifacts?: ArtifactProviders): Promise<RunTaskApp> =>
    runTaskApp(setup, (d) => (dispose = d), artifacts === undefined ? {} : { artifacts });

  /** A started post_plan stage with one task; its request's URLs (as paths) and access token. */
  async function started(a: RunTaskApp, workspaceId = "ws-a", cv = "cv-1") {
    await attachTask(a, await createTask(a, `task-${workspaceId}`), "mandatory", ["post_plan"], workspaceId);
    const { run, stages } = await a.runplane.runTasks.createRun({ workspaceId, configurationVersionId: cv, message: "go" });
    await a.runplane.runTasks.startStage(run.id, stages[0]!.stage);
    const [result] = await a.runplane.runTasks.listResults(stages[0]!.id);
    const payload = await payloadOf(a.storage, a.keyring, result!.id);
    const path = (url: string | null) => (url === null ? null : new URL(url).pathname);
    return {
      runId: run.id,
      resultId: result!.id,
      token: await tokenOf(a, result!.id),
      plan: path(payload.plan_json_api_url as string)!,
      cv: path(payload.configuration_version_download_url as string | null),
    };
  }

  it("serves both artifacts to the result's access token, with their content types", async () => {
    const asked: string[] = [];
    const a = await app(recordingProviders(asked));
    const s = await started(a);
    expect(s.cv).toBe("/api/v2/configuration-versions/cv-1/download");
    const plan = await a.call("GET", s.plan, { token: s.token });
    expect(plan.status).toBe(200);
    expect(plan.headers.get("content-type")).toBe("application/json");
    expect(JSON.parse(plan.text)).toStrictEqual(PLAN);
    const cv = await a.call("GET", s.cv!, { token: s.token });
    expect(cv.status).toBe(200);
    expect(cv.headers.get("content-type")).toBe("application/octet-stream");
    const bytes = new Uint8Array(await (await a.runplane.handler(new Request(`http://localhost${s.cv}`, { headers: { authorization: `Bearer ${s.token}` } }))).arrayBuffer());
    expect(bytes).toStrictEqual(TARBALL);
    expect(asked).toContain(`plan ${s.runId}`);
    expect(asked).toContain(`cv ${s.runId}`);
  });

  it("serves both to an API credential with runs >= read, and 404 to one without", async () => {
    const a = await app(recordingProviders());
    const s = await started(a);
    expect((await a.call("GET", s.plan)).status).toBe(200);
    expect((await a.call("GET", s.cv!)).headers.get("content-type")).toBe("application/octet-stream");
    for (const token of [a.devToken, a.otherOrgToken]) {
      expect((await a.call("GET", s.plan, { token })).status).toBe(404);
      expect((await a.call("GET", s.cv!, { token })).status).toBe(404);
    }
    expect((await a.call("GET", "/api/v2/plans/plan-unknown/json-output")).status).toBe(404);
  });

  it("finds the run an API credential may read when another organization's run names the same ids", async () => {
    const a = await app({ ...recordingProviders(), configurationVersion: (run) => `tgz of ${run.organization}`, planJson: (run) => ({ organization: run.organization }) });
    await a.runplane.directory.projects.create({ id: "prj-o", name: "omega", organization: "other" });
    await a.runplane.directory.workspaces.create({ id: "ws-o", name: "omega-ws", organization: "other", projectId: "prj-o" });
    const ids = { configurationVersionId: "cv-shared", planId: "plan-shared", message: "go" };
    await a.runplane.runTasks.createRun({ workspaceId: "ws-a", ...ids });
    // The other organization's run is the newer one: acme's readers must still find their own, not 404.
    await a.runplane.runTasks.createRun({ workspaceId: "ws-o", ...ids });
    for (const [token, organization] of [[a.ownerToken, "acme"], [a.otherOrgToken, "other"]] as const) {
      const cv = await a.call("GET", "/api/v2/configuration-versions/cv-shared/download", { token });
      expect(cv.status, organization).toBe(200);
      expect(cv.text).toBe(`tgz of ${organization}`);
      const plan = await a.call("GET", "/api/v2/plans/plan-shared/json-output", { token });
      expect(plan.json).toStrictEqual({ organization });
    }
    // A credential that may read neither still learns nothing.
    expect((await a.call("GET", "/api/v2/configuration-versions/cv-shared/download", { token: a.devToken })).status).toBe(404);
  });

  it("answers 401 without a credential or with the token of a final or expired result", async () => {
    const a = await app(recordingProviders());
    const s = await started(a);
    expect((await a.call("GET", s.plan, { token: null })).status).toBe(401);
    expect((await a.call("GET", s.plan, { token: "x".repeat(43) })).status).toBe(401);
    expect((await sendCallback(a, s.resultId, s.token, callbackBody("passed"))).status).toBe(200);
    expect((await a.call("GET", s.plan, { token: s.token })).status).toBe(401);
    expect((await a.call("GET", s.cv!, { token: s.token })).status).toBe(401);

    const late = await started(a, "ws-b", "cv-2");
    await deliverDue(a);
    expect((await a.call("GET", late.plan, { token: late.token })).status).toBe(200);
    a.clock.advance(10 * 60 * 1000 + 1);
    expect((await a.call("GET", late.plan, { token: late.token })).status).toBe(401);
  });

  it("answers 404 to a valid access token asking for another run's artifacts", async () => {
    const a = await app(recordingProviders());
    const mine = await started(a, "ws-a", "cv-1");
    const theirs = await started(a, "ws-b", "cv-2");
    expect((await a.call("GET", theirs.plan, { token: mine.token })).status).toBe(404);
    expect((await a.call("GET", theirs.cv!, { token: mine.token })).status).toBe(404);
    expect((await a.call("GET", mine.plan, { token: mine.token })).status).toBe(200);
  });

  it("answers 404 naming the option when no provider is configured or it returns null", async () => {
    const bare = await app();
    const s = await started(bare);
    // decision D24: no configuration provider, no download URL in the request.
    expect(s.cv).toBeNull();
    const plan = await bare.call("GET", s.plan, { token: s.token });
    expect(plan.status).toBe(404);
    expect(plan.json.errors[0].detail).toContain("artifacts.planJson");
    const cv = await bare.call("GET", "/api/v2/configuration-versions/cv-1/download", { token: s.token });
    expect(cv.status).toBe(404);
    expect(cv.json.errors[0].detail).toContain("artifacts.configurationVersion");
    dispose();

    const empty = await app({ planJson: () => null, configurationVersion: async () => null });
    const e = await started(empty);
    expect((await empty.call("GET", e.plan, { token: e.token })).json.errors[0].detail).toContain("artifacts.planJson");
    expect((await empty.call("GET", e.cv!, { token: e.token })).json.errors[0].detail).toContain("artifacts.configurationVersion");
  });

  it("sends a null download URL and answers 404 for a run whose configuration is marked not downloadable", async () => {
    const a = await app(recordingProviders());
    await attachTask(a, await createTask(a, "t"), "mandatory");
    const { run, stages } = await a.runplane.runTasks.createRun({
      workspaceId: "ws-a",
      configurationVersionId: "cv-hidden",
      configurationVersionDownloadable: false,
      message: "go",
    });
    await a.runplane.runTasks.startStage(run.id, stages[0]!.stage);
    const [result] = await a.runplane.runTasks.listResults(stages[0]!.id);
    expect((await payloadOf(a.storage, a.keyring, result!.id)).configuration_version_download_url).toBeNull();
    const res = await a.call("GET", "/api/v2/configuration-versions/cv-hidden/download", { token: await tokenOf(a, result!.id) });
    expect(res.status).toBe(404);
  });

  it("answers HEAD with the headers and no body, and a provider failure with a bare 500", async () => {
    const a = await app({ planJson: () => PLAN, configurationVersion: () => Promise.reject(new Error("disk /secret/path failed")) });
    const s = await started(a);
    const head = await a.call("HEAD", s.plan, { token: s.token });
    expect([head.status, head.headers.get("content-type"), head.text]).toEqual([200, "application/json", ""]);
    const failed = await a.call("GET", s.cv!, { token: s.token });
    expect(failed.status).toBe(500);
    expect(failed.text).not.toContain("secret");
  });

  it.each([
    ["an object", () => PLAN],
    ["a string", () => JSON.stringify(PLAN)],
    ["bytes", () => new TextEncoder().encode(JSON.stringify(PLAN))],
    ["an ArrayBuffer", () => new TextEncoder().encode(JSON.stringify(PLAN)).buffer],
    ["a Web stream", () => new Blob([JSON.stringify(PLAN)]).stream()],
    ["a Node stream", () => Readable.from([JSON.stringify(PLAN).slice(0, 10), Buffer.from(JSON.stringify(PLAN).slice(10))])],
    ["a Response", async () => new Response(JSON.stringify(PLAN))],
  ] as const)("serves a plan a provider returns as %s", async (_, planJson) => {
    const a = await app({ planJson: planJson as ArtifactProviders["planJson"] });
    const s = await started(a);
    const res = await a.call("GET", s.plan, { token: s.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(JSON.parse(res.text)).toStrictEqual(PLAN);
  });

  it("gives a provider Response the artifact's content type and treats its error status as no artifact", async () => {
    const a = await app({
      planJson: () => new Response("{}", { headers: { "content-type": "text/plain", "x-plan": "kept" } }),
      configurationVersion: () => new Response("gone", { status: 500 }),
    });
    const s = await started(a);
    const plan = await a.call("GET", s.plan, { token: s.token });
    expect(plan.headers.get("content-type")).toBe("application/json");
    expect(plan.headers.get("x-plan")).toBe("kept");
    const cv = await a.call("GET", s.cv!, { token: s.token });
    expect(cv.status).toBe(404);
    expect(cv.text).not.toContain("gone");
  });
});
