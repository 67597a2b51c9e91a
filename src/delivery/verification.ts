/**
 * The save-time check of a run task endpoint (decision D15): the SSRF policy on the URL, then the
 * verification request (`access_token: "test-token"`, signed like every request, D14) through the
 * same guarded transport the deliveries use. A task is created, or its URL or HMAC key changed,
 * only when the endpoint answered exactly 200.
 */
import { runTaskRequestHeaders, serializeRunTaskRequest, SIGNATURE_HEADERS, verificationRequest, type RunTaskUrls } from "../domain/run-task-request.js";
import { ApiError, invalid } from "../errors.js";
import type { Dialect } from "../schemas/common.js";
import type { TaskEndpointCheck } from "../services/task-endpoint.js";
import type { EgressPolicy } from "./address-policy.js";
import type { HttpResponse, HttpTransport } from "./egress.js";
import { agentOf } from "./agent-transport.js";
import { answerWords, failureReason, isRefusal, PRIVATE_WAY, refusalReason, WORDS_IN_REASON } from "./failure-reason.js";

export interface TaskEndpointCheckOptions {
  transport: HttpTransport;
  /** The URL rules checked before anything is sent: scheme, userinfo, names, literal addresses. */
  policy: EgressPolicy;
  urls: RunTaskUrls;
  dialect: Dialect;
  userAgent: string;
  now: () => Date;
}

/**
 * A verification refused with a 4xx (D15) names the causes of a refused signature, most likely
 * first: a key that differs (`runplane/integration` reads both dialects' headers, so the dialect is
 * the rarer cause), then an integration that reads only the other dialect's header; and the check
 * that tells them apart, since an integration's own words are often not shown (D38).
 */
export function signatureHint(dialect: Dialect): string {
  const other: Dialect = dialect === "default" ? "hcp-terraform" : "default";
  const expects = other === "hcp-terraform" ? ", what integrations written for HCP Terraform expect" : "";
  return (
    "If it refused the signature, the likely causes, most likely first: " +
    "1. the HMAC key differs from the one the integration checks; " +
    `2. the integration reads only the ${SIGNATURE_HEADERS[other]} header (dialect "${other}"${expects}), and this request was signed in ${SIGNATURE_HEADERS[dialect]} (dialect "${dialect}"). ` +
    "`runplane check-integration <url> --hmac-key <key> --dialect default`, then with `--dialect hcp-terraform`, tells them apart: " +
    "a differing key fails in both dialects, a dialect mismatch passes in one."
  );
}

export function createTaskEndpointCheck(options: TaskEndpointCheckOptions): TaskEndpointCheck {
  const { transport, policy, urls, dialect, userAgent, now } = options;
  return async ({ organization, url, hmacKey }, pointer) => {
    // Literal addresses and refused names fail here, before a resolver or socket is involved; a
    // name's addresses are checked by the transport's guarded connect when the request goes out.
    const checked = policy.checkUrl(url);
    if (!checked.ok) throw invalid(pointer, `The run task URL is not allowed: ${refusalReason(checked.code, checked.reason)}${wayOut(checked.code)}`);
    const body = serializeRunTaskRequest(verificationRequest({ organizationName: organization, urls, at: now() }));
    const headers = runTaskRequestHeaders({ bytes: body, key: hmacKey, dialect, userAgent });
    let res: HttpResponse;
    try {
      res = await transport.send({ url, headers, body });
    } catch (err) {
      // decision D34: the transport's own 422 (no agent of the pool took it) is the answer as it is.
      if (err instanceof ApiError) throw err;
      const reason = failureReason(err);
      // decision D34: through an agent, the refusal or failure is the agent's, inside its network.
      const agent = agentOf(err);
      if (agent !== undefined) {
        const what = isRefusal(err) ? `refused it: ${reason} (the agent's --allow admits private addresses)` : `could not reach it: ${reason}`;
        throw invalid(pointer, `The run task URL was tried by agent ${agent} of the task's pool, which ${what}`);
      }
      throw invalid(pointer, isRefusal(err) ? `The run task URL is not allowed: ${reason}${wayOut((err as { code: string }).code)}` : `The run task URL could not be reached: ${reason}`);
    }
    if (res.status !== 200) {
      // What the endpoint said, its key and the signature redacted (D31).
      const said = answerWords(res, () => [hmacKey ?? "", headers[SIGNATURE_HEADERS[dialect]] ?? ""], WORDS_IN_REASON);
      // decision D38: an internal service's answer is not quoted to whoever may manage run tasks.
      const through = (res as { agentId?: string }).agentId === undefined ? "the destination is reached through the egress allowlist" : "the agent's egress keeps only the status of a private address";
      const quoted = res.bodyWithheld ? ` (its answer's body is not shown: ${through})` : said ? `: ${said}` : "";
      const hint = res.status >= 400 && res.status < 500 ? ` ${signatureHint(dialect)}` : "";
      throw invalid(pointer, `The run task URL responded with ${res.status} to the verification request${quoted}; it must answer 200.${hint}`);
    }
  };
}

/** A refused address points at the ways to a private integration; a refused URL's reason says its own fix. */
const wayOut = (code: string): string => (code === "refused-address" ? `; ${PRIVATE_WAY}` : "");
