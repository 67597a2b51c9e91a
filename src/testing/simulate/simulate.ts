import { randomBytes } from "node:crypto";
import {
  buildRunTaskRequest,
  runTaskRequestHeaders,
  serializeRunTaskRequest,
  SIGNATURE_HEADERS,
  verificationRequest,
  type RunTaskUrls,
} from "../../domain/run-task-request.js";
import { createEgress, isEgressError, type HttpTransport } from "../../delivery/egress.js";
import { answerWords } from "../../delivery/failure-reason.js";
import { VERIFICATION_ACCESS_TOKEN } from "../../integration/request.js";
import type { Dialect } from "../../schemas/common.js";
import { PLAN_STAGES, type RunStage, type RunTaskRequest } from "../../schemas/run-tasks.js";
import { checkCallbacks } from "./callbacks.js";
import { SIMULATED_PLAN } from "./plan-fixture.js";
import { startPlatform, type SimulatedPlatform } from "./platform.js";
import { formatReport, type SimulationCheck, type SimulationReport } from "./report.js";

export { formatReport, SIMULATED_PLAN, type SimulationCheck, type SimulationReport };

export interface SimulateRunTaskOptions {
  /** The integration's run task URL. */
  url: string;
  /** The HMAC key the integration verifies with. */
  hmacKey: string;
  /** Default `["post_plan"]`. */
  stages?: readonly RunStage[];
  /** decision D1: `default` signs in X-SVC-Task-Signature, `hcp-terraform` in X-TFC-Task-Signature. */
  dialect?: Dialect;
  /** How long the integration may take to answer a request (spec 4.1: 10 s). */
  responseTimeoutMs?: number;
  /** How long to wait for the final callback of each stage. Default 10 s. */
  callbackTimeoutMs?: number;
  /** The plan served at `plan_json_api_url`. Default: a deterministic three-change plan. */
  plan?: unknown;
}

const ORG = "simulated-org";
const WRONG_KEY = "runplane-simulator-wrong-key";

function runRequest(stage: RunStage, urls: RunTaskUrls, suffix: string, token: string): RunTaskRequest {
  return buildRunTaskRequest({
    stage,
    accessToken: token,
    urls,
    organizationName: ORG,
    run: { id: `run-${suffix}`, createdAt: "2026-01-01T00:00:00.000Z", createdBy: "simulator", message: "runplane simulated run", isSpeculative: false, planId: `plan-${suffix}` },
    configurationVersion: { id: `cv-${suffix}`, downloadable: true },
    workspace: { id: `ws-${suffix}`, name: "simulated-workspace", workingDirectory: "" },
    vcs: null,
    taskResult: { id: `taskrs-${suffix}`, enforcementLevel: "mandatory" },
  });
}

/**
 * The egress that sends the simulator's requests (decision D15): the guarded transport, allowing
 * exactly the integration's host and port, since the user points the simulator at their own
 * integration (often on loopback, which the guard refuses by default).
 */
function egressFor(url: string, timeoutMs: number): HttpTransport {
  const target = new URL(url);
  const port = target.port || (target.protocol === "https:" ? "443" : "80");
  // decision D38: the user's own integration, so any address of it, and its answers quoted whole.
  return createEgress({ allow: [`${target.hostname}:${port}`], wide: true, excerpts: "full", timeoutMs, userAgent: "runplane-simulator" });
}

/** An answer's status, and for one that is not 200 what the integration said (D31), or a failure. */
type Sent = { status: number; said: string | null } | { error: string };

/**
 * Sends one signed request; a refusal, timeout or network failure becomes an `error` line. What an
 * answer other than 200 said is kept as runplane keeps it (D31): its excerpt on one line, the key,
 * the access token and the signature redacted, since an integration may echo the request; the
 * user's key (`userKey`) too, whichever key signed this request.
 */
async function send(egress: HttpTransport, url: string, payload: RunTaskRequest, key: string, dialect: Dialect, timeoutMs: number, userKey: string): Promise<Sent> {
  const bytes = serializeRunTaskRequest(payload);
  const headers = runTaskRequestHeaders({ bytes, key, dialect, userAgent: "runplane-simulator" });
  // The verification request's token is the same public word for everyone: nothing to hide.
  const token = payload.access_token === VERIFICATION_ACCESS_TOKEN ? "" : payload.access_token;
  try {
    const res = await egress.send({ url, headers, body: bytes });
    return { status: res.status, said: res.status === 200 ? null : answerWords(res, () => [userKey, key, token, headers[SIGNATURE_HEADERS[dialect]] ?? ""]) };
  } catch (error) {
    if (isEgressError(error) && error.code === "timeout") return { error: `no answer within ${timeoutMs} ms` };
    return { error: `request failed (${isEgressError(error) ? error.message : error instanceof Error ? error.message : String(error)})` };
  }
}

/** `answered 404` and, when it said something, `: <what it said>`. */
const answeredWith = (result: { status: number; said: string | null }): string => `answered ${result.status}${result.said ? `: ${result.said}` : ""}`;

const answered200 = (scope: string, result: Sent): SimulationCheck =>
  "error" in result
    ? { scope, name: "answer", level: "fail", detail: result.error }
    : { scope, name: "answer", level: result.status === 200 ? "pass" : "fail", detail: result.status === 200 ? "200" : `${answeredWith(result)}; expected 200` };

async function waitForFinal(platform: SimulatedPlatform, suffix: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const final = () => platform.traffic(suffix).callbacks.some((c) => /"status"\s*:\s*"(passed|failed)"/.test(c.body));
  while (Date.now() < deadline && !final()) await new Promise((r) => setTimeout(r, 25));
  // A short grace period catches callbacks sent after the final status.
  if (final()) await new Promise((r) => setTimeout(r, 100));
}

/** Plays the platform against an integration and checks it against the run task contract (spec 4.1, 4.2). */
/**
 * Whether the integration downloaded an artifact, and with the access token (D24; the simulated
 * platform answers 401 without it, as runplane does). The plan is expected at plan stages, so not
 * fetching it is a warning; the configuration is optional.
 */
function fetchCheck(scope: string, artifact: "plan" | "configuration", fetches: { authorization: string | undefined }[], token: string): SimulationCheck {
  const name = `${artifact} fetched`;
  const url = artifact === "plan" ? "plan_json_api_url" : "configuration_version_download_url";
  if (fetches.length === 0) {
    return artifact === "plan"
      ? { scope, name, level: "warn", detail: `the integration did not download ${url}` }
      : { scope, name, level: "pass", detail: `not downloaded (optional; ${url} is there for integrations that read the configuration)` };
  }
  const authed = fetches.every((f) => f.authorization === `Bearer ${token}`);
  return authed
    ? { scope, name, level: "pass", detail: "with the access token" }
    : { scope, name, level: "warn", detail: `without Authorization: Bearer <access_token> (answered 401, as runplane would)` };
}

/**
 * What the integration read of the run through the API (D24: `GET /runs/:id`, its plan,
 * apply, log, events, comments, policy checks), as runplane serves it; an answer of 4xx is advice.
 */
function runReadCheck(scope: string, reads: { route: string; status: number }[]): SimulationCheck {
  const refused = reads.filter((r) => r.status >= 400);
  const routes = [...new Set(reads.map((r) => r.route))].join(", ");
  return refused.length === 0
    ? { scope, name: "run read", level: "pass", detail: routes }
    : { scope, name: "run read", level: "warn", detail: `${refused.map((r) => `${r.route} answered ${r.status}`).join("; ")} (an API token as Authorization: Bearer is needed)` };
}

export async function simulateRunTask(options: SimulateRunTaskOptions): Promise<SimulationReport> {
  const dialect = options.dialect ?? "default";
  const responseMs = options.responseTimeoutMs ?? 10_000;
  const callbackMs = options.callbackTimeoutMs ?? 10_000;
  const platform = await startPlatform(options.plan ?? SIMULATED_PLAN, dialect);
  const urls: RunTaskUrls = { publicUrl: platform.origin, appUrl: platform.origin, basePath: "/api/v2" };
  const checks: SimulationCheck[] = [];
  const egress = egressFor(options.url, responseMs);
  try {
    const verification = verificationRequest({ organizationName: ORG, urls, at: new Date(0) });
    checks.push(answered200("verification", await send(egress, options.url, verification, options.hmacKey, dialect, responseMs, options.hmacKey)));

    const wrongSuffix = randomBytes(8).toString("hex");
    const wrong = await send(egress, options.url, runRequest("post_plan", urls, wrongSuffix, randomBytes(16).toString("hex")), WRONG_KEY, dialect, responseMs, options.hmacKey);
    const refused = "status" in wrong && wrong.status >= 400 && wrong.status < 500;
    checks.push({
      scope: "signature",
      name: "wrong key refused",
      level: refused ? "pass" : "fail",
      detail: "error" in wrong ? wrong.error : refused ? answeredWith(wrong) : `a request signed with a wrong key was answered ${wrong.status}; it must be refused (4xx)`,
    });

    for (const stage of options.stages ?? ["post_plan"]) {
      const suffix = randomBytes(8).toString("hex");
      const token = randomBytes(24).toString("hex");
      platform.traffic(suffix).token = token;
      const sentAt = Date.now();
      const answer = await send(egress, options.url, runRequest(stage, urls, suffix, token), options.hmacKey, dialect, responseMs, options.hmacKey);
      checks.push(answered200(stage, answer));
      if ("error" in answer || answer.status !== 200) continue;
      await waitForFinal(platform, suffix, callbackMs);
      const traffic = platform.traffic(suffix);
      if ((PLAN_STAGES as readonly RunStage[]).includes(stage)) checks.push(fetchCheck(stage, "plan", traffic.planFetches, token));
      checks.push(fetchCheck(stage, "configuration", traffic.configFetches, token));
      if (traffic.runReads.length > 0) checks.push(runReadCheck(stage, traffic.runReads));
      checks.push(...checkCallbacks(stage, token, traffic.callbacks, sentAt, callbackMs));
    }
  } finally {
    await egress.close();
    await platform.close();
  }
  return { ok: checks.every((c) => c.level !== "fail"), checks };
}
