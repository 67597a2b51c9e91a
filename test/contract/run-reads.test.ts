import { afterEach, describe, expect, it } from "vitest";
import type { ArtifactRun, PolicyCheckDetails } from "../../src/index.js";
import { listDocument, oneDocument, problems } from "./go-tfe-shapes.js";
import { startContractServer, type ContractServer } from "./harness.js";

/**
 * What go-tfe reads of a run beyond the run itself (D49): `ConfigurationVersions.Read`
 * (`GET /configuration-versions/:id`), `PolicyChecks.Logs` (`GET /policy-checks/:id/output`, after
 * reading the check until it is neither pending nor queued) and `Variables.ListAll`
 * (`GET /workspaces/:id/all-vars`), decoded with go-tfe's field names and types.
 */

const VCS = { branch: "main", repoUrl: "https://git.example/acme/infra", commitUrl: "https://git.example/acme/infra/commit/abc123", commitHash: "abc123", pullRequestUrl: null };

const check = (run: ArtifactRun, status: string): PolicyCheckDetails => ({
  id: `polchk-${run.id}`,
  status,
  scope: "organization",
  result: { result: status === "passed", passed: 2, totalFailed: status === "passed" ? 0 : 1, hardFailed: 0, softFailed: status === "passed" ? 0 : 1, advisoryFailed: 0, duration: 12 },
});

describe("go-tfe reads what a run links to", () => {
  let server: ContractServer | undefined;
  afterEach(async () => server?.close());

  async function started(options: Parameters<typeof startContractServer>[0] = {}) {
    const s = (server = await startContractServer(options));
    const { run } = await s.app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-1", message: "go", createdBy: "user-owner", vcs: VCS });
    return { s, run };
  }

  it("ConfigurationVersions.Read: the run's configuration version, as go-tfe decodes it", async () => {
    const { s, run } = await started();
    const read = await s.call("GET", "/configuration-versions/cv-1");
    expect(read.status).toBe(200);
    expect(problems(oneDocument("ConfigurationVersion"), read.json)).toStrictEqual([]);
    expect(read.json.data.attributes).toMatchObject({ status: "uploaded", source: "tfe-api", speculative: false, provisional: false, "upload-url": null });
    expect(read.json.data.attributes["status-timestamps"]).toStrictEqual({ "uploaded-at": expect.stringMatching(/\+00:00$/) });
    expect(read.json.data.relationships["ingress-attributes"].data).toStrictEqual({ type: "ingress-attributes", id: "ia-cv-1" });
    // ConfigVerIncludeOpt: ingress_attributes and run.
    const both = await s.call("GET", "/configuration-versions/cv-1?include=ingress_attributes,run");
    expect(both.status).toBe(200);
    expect((both.json.included as { type: string; id: string }[]).map((r) => `${r.type}:${r.id}`)).toStrictEqual(["ingress-attributes:ia-cv-1", `runs:${run.id}`]);
    // The run's include writes the same resource.
    const viaRun = await s.call("GET", `/runs/${run.id}?include=configuration_version`);
    expect(viaRun.json.included[0]).toStrictEqual(read.json.data);
  });

  it("ConfigurationVersions.Read: 404 for an unknown one, for one of a run the caller may not read, and archived when not downloadable", async () => {
    const { s } = await started();
    expect((await s.call("GET", "/configuration-versions/cv-nope")).status).toBe(404);
    expect((await s.call("GET", "/configuration-versions/cv-1", { token: s.app.devToken })).status).toBe(404);
    await s.app.runplane.runTasks.createRun({ workspaceId: "ws-a", configurationVersionId: "cv-gone", configurationVersionDownloadable: false });
    expect((await s.call("GET", "/configuration-versions/cv-gone")).json.data.attributes.status).toBe("archived");
  });

  it("PolicyChecks.Logs: the check's output as text, from the host or written from its result", async () => {
    const output = (run: ArtifactRun) => `Sentinel Result: true\n\npolicy output of ${run.id}\n`;
    for (const withOutput of [true, false]) {
      const { s, run } = await started({
        runs: {
          policyChecks: (r: ArtifactRun) => [check(r, "soft_failed")],
          policyCheckRun: (id: string) => id.replace(/^polchk-/, ""),
          ...(withOutput ? { policyCheckOutput: (r: ArtifactRun) => output(r) } : {}),
        },
      });
      const res = await s.call("GET", `/policy-checks/polchk-${run.id}/output`);
      expect(res.status).toBe(200);
      expect(res.contentType).toMatch(/^text\/plain/);
      if (withOutput) expect(res.text).toBe(output(run));
      else expect(res.text).toBe("Sentinel Result: false\n\n3 policies evaluated: 2 passed, 1 failed (0 hard-mandatory, 1 soft-mandatory, 0 advisory).\n");
      expect((await s.call("GET", `/policy-checks/polchk-${run.id}/output`, { token: s.app.devToken })).status).toBe(404);
      expect((await s.call("GET", "/policy-checks/polchk-run-nope/output")).status).toBe(404);
      await server!.close();
      server = undefined;
    }
  });

  it("Variables.ListAll: the workspace's variables as HCP lists all-vars (runplane has no variable sets)", async () => {
    const { s } = await started();
    await s.app.runplane.variables.create("ws-a", { key: "region", value: "eu", category: "env" });
    await s.app.runplane.variables.create("ws-a", { key: "secret", value: "hunter2", category: "config", sensitive: true });
    const all = await s.call("GET", "/workspaces/ws-a/all-vars");
    expect(all.status).toBe(200);
    expect(problems(listDocument("Variable", "optional"), all.json)).toStrictEqual([]);
    const vars = await s.call("GET", "/workspaces/ws-a/vars");
    expect(all.json.data).toStrictEqual(vars.json.data);
    expect(all.json.data.map((v: any) => [v.attributes.key, v.attributes.value])).toStrictEqual([["region", "eu"], ["secret", null]]);
    expect((await s.call("GET", "/workspaces/ws-a/all-vars", { token: s.app.devToken })).status).toBe(404);
  });
});
