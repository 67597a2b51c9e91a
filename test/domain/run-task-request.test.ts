import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  buildRunTaskRequest,
  defaultUserAgent,
  runTaskRequestHeaders,
  serializeRunTaskRequest,
  SIGNATURE_HEADERS,
  signatureHeaderValue,
  verificationRequest,
  verifySignature,
  type RunTaskRequestInput,
} from "../../src/domain/run-task-request.js";
import { RUN_STAGES, RunTaskRequestSchema, type RunStage } from "../../src/schemas/run-tasks.js";

const urls = { publicUrl: "https://runplane.example", appUrl: "https://app.runplane.example", basePath: "/api/v2" };

const input = (overrides: Partial<RunTaskRequestInput> = {}): RunTaskRequestInput => ({
  stage: "post_plan",
  accessToken: "at-secret",
  urls,
  organizationName: "acme",
  run: {
    id: "run-AAAAAAAAAAAAAAAA",
    createdAt: "2024-01-01T00:00:00.000Z",
    createdBy: "someuser",
    message: "Triggered via API",
    isSpeculative: false,
    planId: "plan-BBBBBBBBBBBBBBBB",
  },
  configurationVersion: { id: "cv-CCCCCCCCCCCCCCCC", downloadable: true },
  workspace: { id: "ws-DDDDDDDDDDDDDDDD", name: "networking", workingDirectory: "infra" },
  vcs: null,
  taskResult: { id: "taskrs-EEEEEEEEEEEEEEEE", enforcementLevel: "mandatory" },
  ...overrides,
});

// Spec 4.1, every common key; plan_json_api_url is added for the later stages.
const COMMON_KEYS = [
  "payload_version",
  "stage",
  "access_token",
  "capabilities",
  "configuration_version_download_url",
  "configuration_version_id",
  "is_speculative",
  "organization_name",
  "run_app_url",
  "run_created_at",
  "run_created_by",
  "run_id",
  "run_message",
  "task_result_callback_url",
  "task_result_enforcement_level",
  "task_result_id",
  "vcs_branch",
  "vcs_commit_url",
  "vcs_commit_hash",
  "vcs_pull_request_url",
  "vcs_repo_url",
  "workspace_app_url",
  "workspace_id",
  "workspace_name",
  "workspace_working_directory",
];

describe("run task request", () => {
  it("has every field of spec 4.1 with the documented values", () => {
    expect(buildRunTaskRequest(input())).toEqual({
      payload_version: 1,
      stage: "post_plan",
      access_token: "at-secret",
      capabilities: { outcomes: true },
      configuration_version_download_url: "https://runplane.example/api/v2/configuration-versions/cv-CCCCCCCCCCCCCCCC/download",
      configuration_version_id: "cv-CCCCCCCCCCCCCCCC",
      is_speculative: false,
      organization_name: "acme",
      plan_json_api_url: "https://runplane.example/api/v2/plans/plan-BBBBBBBBBBBBBBBB/json-output",
      run_app_url: "https://app.runplane.example/app/acme/networking/runs/run-AAAAAAAAAAAAAAAA",
      run_created_at: "2024-01-01T00:00:00.000Z",
      run_created_by: "someuser",
      run_id: "run-AAAAAAAAAAAAAAAA",
      run_message: "Triggered via API",
      task_result_callback_url: "https://runplane.example/api/v2/task-results/taskrs-EEEEEEEEEEEEEEEE/callback",
      task_result_enforcement_level: "mandatory",
      task_result_id: "taskrs-EEEEEEEEEEEEEEEE",
      vcs_branch: null,
      vcs_commit_url: null,
      vcs_commit_hash: null,
      vcs_pull_request_url: null,
      vcs_repo_url: null,
      workspace_app_url: "https://app.runplane.example/app/acme/networking",
      workspace_id: "ws-DDDDDDDDDDDDDDDD",
      workspace_name: "networking",
      workspace_working_directory: "infra",
    });
  });

  it.each(RUN_STAGES)("has exactly the documented keys for %s and parses with the request schema", (stage) => {
    const payload = buildRunTaskRequest(input({ stage }));
    const expected = stage === "pre_plan" ? COMMON_KEYS : [...COMMON_KEYS, "plan_json_api_url"];
    expect(Object.keys(payload).sort()).toEqual([...expected].sort());
    expect(RunTaskRequestSchema.safeParse(payload).success).toBe(true);
  });

  it.each<[RunStage, boolean]>([
    ["pre_plan", false],
    ["post_plan", true],
    ["pre_apply", true],
    ["post_apply", true],
  ])("sends plan_json_api_url for %s: %s", (stage, sent) => {
    const bytes = serializeRunTaskRequest(buildRunTaskRequest(input({ stage })));
    expect(new TextDecoder().decode(bytes).includes('"plan_json_api_url"')).toBe(sent);
  });

  it("writes null for every vcs field without a VCS repository", () => {
    const payload = buildRunTaskRequest(input({ vcs: null }));
    expect([payload.vcs_branch, payload.vcs_commit_url, payload.vcs_commit_hash, payload.vcs_pull_request_url, payload.vcs_repo_url]).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(new TextDecoder().decode(serializeRunTaskRequest(payload))).toContain('"vcs_branch":null');
  });

  it("writes the vcs fields of a VCS workspace and null for a run without a pull request", () => {
    const vcs = {
      branch: "main",
      repoUrl: "https://github.com/acme/networking",
      commitUrl: "https://github.com/acme/networking/commit/abc123",
      commitHash: "abc123",
      pullRequestUrl: null,
    };
    const payload = buildRunTaskRequest(input({ vcs }));
    expect(payload).toMatchObject({
      vcs_branch: "main",
      vcs_repo_url: "https://github.com/acme/networking",
      vcs_commit_url: "https://github.com/acme/networking/commit/abc123",
      vcs_commit_hash: "abc123",
      vcs_pull_request_url: null,
    });
  });

  it("writes a null commit hash for a VCS run recorded without one", () => {
    const vcs = { branch: "main", repoUrl: "https://github.com/acme/networking", commitUrl: null, pullRequestUrl: null };
    const payload = buildRunTaskRequest(input({ vcs }));
    expect(Object.keys(payload)).toContain("vcs_commit_hash");
    expect(payload.vcs_commit_hash).toBeNull();
  });

  it("parses a request whose vcs_commit_hash is a string, null or left out (older senders), and refuses any other type", () => {
    const payload: Record<string, unknown> = { ...buildRunTaskRequest(input()) };
    expect(RunTaskRequestSchema.parse({ ...payload, vcs_commit_hash: "abc123" }).vcs_commit_hash).toBe("abc123");
    expect(RunTaskRequestSchema.parse({ ...payload, vcs_commit_hash: null }).vcs_commit_hash).toBeNull();
    delete payload.vcs_commit_hash;
    expect(RunTaskRequestSchema.safeParse(payload).success).toBe(true);
    expect(RunTaskRequestSchema.safeParse({ ...payload, vcs_commit_hash: 42 }).success).toBe(false);
  });

  it("writes a null download URL when the configuration version cannot be downloaded", () => {
    const payload = buildRunTaskRequest(input({ configurationVersion: { id: "cv-CCCCCCCCCCCCCCCC", downloadable: false } }));
    expect(payload.configuration_version_download_url).toBeNull();
    expect(payload.configuration_version_id).toBe("cv-CCCCCCCCCCCCCCCC");
  });

  it("joins URLs without doubled slashes and honours a custom base path", () => {
    const payload = buildRunTaskRequest(
      input({ urls: { publicUrl: "https://h.example/", appUrl: "https://ui.example//", basePath: "/tfe/api/v2/" } }),
    );
    expect(payload.task_result_callback_url).toBe("https://h.example/tfe/api/v2/task-results/taskrs-EEEEEEEEEEEEEEEE/callback");
    expect(payload.plan_json_api_url).toBe("https://h.example/tfe/api/v2/plans/plan-BBBBBBBBBBBBBBBB/json-output");
    expect(payload.workspace_app_url).toBe("https://ui.example/app/acme/networking");
  });

  it("signs exactly the serialized bytes, which are JSON.stringify of the payload", () => {
    const payload = buildRunTaskRequest(input());
    const bytes = serializeRunTaskRequest(payload);
    expect(Buffer.from(bytes).toString("utf8")).toBe(JSON.stringify(payload));

    const headers = runTaskRequestHeaders({ bytes, key: "hmac-key", dialect: "default", userAgent: "runplane/0.1.0" });
    const expected = createHmac("sha512", "hmac-key").update(bytes).digest("hex");
    expect(headers["X-SVC-Task-Signature"]).toBe(expected);
    expect(verifySignature(bytes, expected, "hmac-key")).toBe(true);

    // A receiver that re-serializes the parsed body signs different bytes: the classic verifier bug.
    const reserialized = new TextEncoder().encode(JSON.stringify(JSON.parse(JSON.stringify(payload)), null, 2));
    expect(verifySignature(reserialized, expected, "hmac-key")).toBe(false);
  });

  it("sends the signature header empty when the task has no HMAC key", () => {
    const bytes = serializeRunTaskRequest(buildRunTaskRequest(input()));
    const headers = runTaskRequestHeaders({ bytes, key: null, dialect: "default", userAgent: "runplane/0.1.0" });
    expect(headers).toEqual({
      "Content-Type": "application/json",
      "User-Agent": "runplane/0.1.0",
      "X-SVC-Task-Signature": "",
    });
    expect(signatureHeaderValue(bytes, null)).toBe("");
  });

  it("names the signature header per dialect and identifies itself as runplane/<version>", () => {
    expect(SIGNATURE_HEADERS).toEqual({ default: "X-SVC-Task-Signature", "hcp-terraform": "X-TFC-Task-Signature" });
    const bytes = serializeRunTaskRequest(buildRunTaskRequest(input()));
    const headers = runTaskRequestHeaders({ bytes, key: "k", dialect: "hcp-terraform", userAgent: defaultUserAgent("1.2.3") });
    expect(headers["X-TFC-Task-Signature"]).toMatch(/^[0-9a-f]{128}$/);
    expect(headers["X-SVC-Task-Signature"]).toBeUndefined();
    expect(headers["User-Agent"]).toBe("runplane/1.2.3");
  });
});

describe("run task request schema", () => {
  const payload = buildRunTaskRequest(input());

  it("rejects plan_json_api_url on a pre_plan request", () => {
    const result = RunTaskRequestSchema.safeParse({ ...payload, stage: "pre_plan" });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["plan_json_api_url"]);
  });

  it("rejects a payload version other than 1 and a missing vcs field", () => {
    expect(RunTaskRequestSchema.safeParse({ ...payload, payload_version: 2 }).success).toBe(false);
    const { vcs_repo_url: _omitted, ...withoutRepo } = payload;
    expect(RunTaskRequestSchema.safeParse(withoutRepo).success).toBe(false);
  });

  it("accepts and strips fields newer HCP Terraform releases add", () => {
    const result = RunTaskRequestSchema.safeParse({ ...payload, vcs_commit_hash: null, project_name: "Default Project" });
    expect(result.success).toBe(true);
    expect(result.data).toEqual(payload);
  });
});

describe("verification request", () => {
  const at = new Date("2024-05-06T07:08:09.123Z");
  const payload = verificationRequest({ organizationName: "acme", urls, at });

  it("uses the test-token access token integrations recognise", () => {
    expect(payload.access_token).toBe("test-token");
  });

  it("has every documented key with placeholder values and parses with the request schema", () => {
    expect(Object.keys(payload).sort()).toEqual([...COMMON_KEYS, "plan_json_api_url"].sort());
    expect(RunTaskRequestSchema.parse(payload)).toEqual(payload);
    expect(payload.organization_name).toBe("acme");
    expect(payload.task_result_callback_url).toBe(
      "https://runplane.example/api/v2/task-results/taskrs-XXXXXXXXXXXXXXXX/callback",
    );
  });

  it("stamps run_created_at with the given time as an RFC 3339 timestamp", () => {
    expect(payload.run_created_at).toBe("2024-05-06T07:08:09.123Z");
    expect(Date.parse(payload.run_created_at)).toBe(at.getTime());
  });

  it("is signed like any other request", () => {
    const bytes = serializeRunTaskRequest(payload);
    expect(verifySignature(bytes, signatureHeaderValue(bytes, "k"), "k")).toBe(true);
  });
});

describe("signature check: format", () => {
  it("refuses a valid signature with anything before or after it, rather than comparing or throwing", () => {
    const bytes = new TextEncoder().encode('{"a":1}');
    const good = signatureHeaderValue(bytes, "k");
    expect(verifySignature(bytes, good, "k")).toBe(true);
    for (const header of [`${good}00`, `0${good}`, `${good}g`, `x${good}`, good.slice(2), `${good} ${good}`]) {
      expect(verifySignature(bytes, header, "k")).toBe(false);
    }
  });
});
