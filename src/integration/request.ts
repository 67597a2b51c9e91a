import { RunTaskRequestSchema, type RunTaskRequest } from "../schemas/run-tasks.js";
import { issuesOf, type ValidationIssue } from "./issues.js";

/**
 * The `access_token` of the request sent when a run task is created or its URL or key changes.
 * HCP Terraform only saves the task when that request gets a 200 (reference 2.3).
 */
export const VERIFICATION_ACCESS_TOKEN = "test-token";

export type ParseRunTaskRequestResult =
  | { ok: true; request: RunTaskRequest; isVerification: boolean }
  | { ok: false; issues: ValidationIssue[] };

type Decoded = { ok: true; value: unknown } | { ok: false; issues: ValidationIssue[] };

// fatal: bytes that are not UTF-8 cannot be what the service signed as JSON, so refuse them.
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Text and bytes are JSON to decode; anything else is taken as an already parsed value. */
export function decodeBody(body: unknown): Decoded {
  if (!(typeof body === "string" || body instanceof Uint8Array || body instanceof ArrayBuffer)) {
    return { ok: true, value: body };
  }
  let text: string;
  try {
    text = typeof body === "string" ? body : decoder.decode(body);
  } catch {
    return { ok: false, issues: [{ pointer: "", message: "body is not valid UTF-8" }] };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, issues: [{ pointer: "", message: "body is not valid JSON" }] };
  }
}

/**
 * Parses a run task request (spec 4.1) from raw bytes, JSON text or an already parsed value.
 * Every documented field is checked; unknown keys (newer HCP Terraform fields such as
 * `vcs_commit_hash`) are dropped. `isVerification` marks the request sent when the run task is
 * saved: answer it 200 and send no callback.
 */
export function parseRunTaskRequest(body: unknown): ParseRunTaskRequestResult {
  const decoded = decodeBody(body);
  if (!decoded.ok) return decoded;
  const parsed = RunTaskRequestSchema.safeParse(decoded.value);
  if (!parsed.success) return { ok: false, issues: issuesOf(parsed.error) };
  return { ok: true, request: parsed.data, isVerification: parsed.data.access_token === VERIFICATION_ACCESS_TOKEN };
}
