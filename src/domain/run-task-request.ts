import { createHmac, timingSafeEqual } from "node:crypto";
import type { Dialect } from "../schemas/common.js";
import type { EnforcementLevel, RunStage, RunTaskRequest } from "../schemas/run-tasks.js";
import { PLAN_STAGES } from "../schemas/run-tasks.js";

/** The outbound run task request and its signature (spec 4.1, decisions D1, D14). Pure. */

/** decision D1 */
export const SIGNATURE_HEADERS = {
  default: "X-SVC-Task-Signature",
  "hcp-terraform": "X-TFC-Task-Signature",
} as const satisfies Record<Dialect, string>;

/** decision D1: a fixed product identifier, overridable by option. */
export const defaultUserAgent = (version: string): string => `runplane/${version}`;

/** Where links in the payload point. `publicUrl` is the API origin as integrations reach it. */
export interface RunTaskUrls {
  publicUrl: string;
  /** Origin of the UI for `run_app_url` and `workspace_app_url`. */
  appUrl: string;
  /** decision D2, default `/api/v2` */
  basePath: string;
}

export interface RunTaskRequestInput {
  stage: RunStage;
  accessToken: string;
  urls: RunTaskUrls;
  organizationName: string;
  run: {
    id: string;
    createdAt: string;
    createdBy: string;
    message: string;
    isSpeculative: boolean;
    /** A run has its plan id from creation; the URL is only sent for stages after the plan. */
    planId: string;
  };
  configurationVersion: { id: string; downloadable: boolean };
  workspace: { id: string; name: string; workingDirectory: string };
  /** null when the workspace has no VCS repository. */
  vcs: {
    branch: string | null;
    repoUrl: string | null;
    commitUrl: string | null;
    /** The commit SHA; absent (null) for runs stored before it was recorded. */
    commitHash?: string | null;
    /** null unless a pull/merge request triggered the run. */
    pullRequestUrl: string | null;
  } | null;
  taskResult: { id: string; enforcementLevel: EnforcementLevel };
}

const trimSlashes = (url: string): string => url.replace(/\/+$/, "");
const normalizeBasePath = (basePath: string): string => {
  const trimmed = trimSlashes(basePath);
  return trimmed === "" || trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
};
const seg = encodeURIComponent;

/** Every field of spec 4.1 in one place (decision D14). Keys are in the documented order. */
export function buildRunTaskRequest(input: RunTaskRequestInput): RunTaskRequest {
  const api = `${trimSlashes(input.urls.publicUrl)}${normalizeBasePath(input.urls.basePath)}`;
  const workspaceApp = `${trimSlashes(input.urls.appUrl)}/app/${seg(input.organizationName)}/${seg(input.workspace.name)}`;
  const withPlan = (PLAN_STAGES as readonly RunStage[]).includes(input.stage);
  return {
    payload_version: 1,
    stage: input.stage,
    access_token: input.accessToken,
    capabilities: { outcomes: true },
    configuration_version_download_url: input.configurationVersion.downloadable
      ? `${api}/configuration-versions/${seg(input.configurationVersion.id)}/download`
      : null,
    configuration_version_id: input.configurationVersion.id,
    is_speculative: input.run.isSpeculative,
    organization_name: input.organizationName,
    ...(withPlan ? { plan_json_api_url: `${api}/plans/${seg(input.run.planId)}/json-output` } : {}),
    run_app_url: `${workspaceApp}/runs/${seg(input.run.id)}`,
    run_created_at: input.run.createdAt,
    run_created_by: input.run.createdBy,
    run_id: input.run.id,
    run_message: input.run.message,
    task_result_callback_url: `${api}/task-results/${seg(input.taskResult.id)}/callback`,
    task_result_enforcement_level: input.taskResult.enforcementLevel,
    task_result_id: input.taskResult.id,
    vcs_branch: input.vcs?.branch ?? null,
    vcs_commit_url: input.vcs?.commitUrl ?? null,
    vcs_commit_hash: input.vcs?.commitHash ?? null,
    vcs_pull_request_url: input.vcs?.pullRequestUrl ?? null,
    vcs_repo_url: input.vcs?.repoUrl ?? null,
    workspace_app_url: workspaceApp,
    workspace_id: input.workspace.id,
    workspace_name: input.workspace.name,
    workspace_working_directory: input.workspace.workingDirectory,
  };
}

export interface VerificationRequestInput {
  organizationName: string;
  urls: RunTaskUrls;
  at: Date;
}

const PLACEHOLDER = "XXXXXXXXXXXXXXXX";

/**
 * The test request sent when a run task is created or its URL/key changes. Integrations (the
 * HashiCorp scaffold among them) recognise it by `access_token: "test-token"` and answer 200; every
 * documented key is present, so strict parsers accept it too.
 */
export function verificationRequest(input: VerificationRequestInput): RunTaskRequest {
  return buildRunTaskRequest({
    stage: "post_plan",
    accessToken: "test-token",
    urls: input.urls,
    organizationName: input.organizationName,
    run: {
      id: `run-${PLACEHOLDER}`,
      createdAt: input.at.toISOString(),
      createdBy: "runplane",
      message: "runplane run task verification",
      isSpeculative: false,
      planId: `plan-${PLACEHOLDER}`,
    },
    configurationVersion: { id: `cv-${PLACEHOLDER}`, downloadable: true },
    workspace: { id: `ws-${PLACEHOLDER}`, name: "runplane-verification", workingDirectory: "" },
    vcs: null,
    taskResult: { id: `taskrs-${PLACEHOLDER}`, enforcementLevel: "advisory" },
  });
}

const encoder = new TextEncoder();

/** Serialized exactly once: these bytes are both signed and sent (decision D14). */
export const serializeRunTaskRequest = (payload: RunTaskRequest): Uint8Array => encoder.encode(JSON.stringify(payload));

/** Lower-case hex HMAC-SHA512 of exactly `bytes`. Always signs, even with an empty key. */
export const signPayload = (bytes: Uint8Array, key: string | Uint8Array): string =>
  createHmac("sha512", key).update(bytes).digest("hex");

/**
 * The signature header value: sent on every request, empty when the task has no HMAC key
 * (decision D14). An empty key counts as no key: it would authenticate nothing.
 */
export const signatureHeaderValue = (bytes: Uint8Array, key: string | Uint8Array | null | undefined): string =>
  key === null || key === undefined || key.length === 0 ? "" : signPayload(bytes, key);

const HEX_SHA512 = /^[0-9a-f]{128}$/i;

/** Constant-time check of a received signature header against `bytes`; tolerates upper-case hex. */
export function verifySignature(
  bytes: Uint8Array,
  header: string | null | undefined,
  key: string | Uint8Array,
): boolean {
  const received = header?.trim() ?? "";
  // A malformed header is refused before comparing; its length is public, the digest is not.
  if (!HEX_SHA512.test(received)) return false;
  return timingSafeEqual(Buffer.from(signPayload(bytes, key), "hex"), Buffer.from(received, "hex"));
}

export interface RequestHeadersInput {
  bytes: Uint8Array;
  key: string | Uint8Array | null | undefined;
  dialect: Dialect;
  userAgent: string;
}

/** The headers of spec 4.1, in the dialect's spelling (decision D1). */
export const runTaskRequestHeaders = (input: RequestHeadersInput): Record<string, string> => ({
  "Content-Type": "application/json",
  "User-Agent": input.userAgent,
  [SIGNATURE_HEADERS[input.dialect]]: signatureHeaderValue(input.bytes, input.key),
});
