/**
 * The save-time check of a run task endpoint (decision D15): the SSRF policy on the URL, then the
 * verification request (`access_token: "test-token"`, signed like every request, D14) through the
 * same guarded transport the deliveries use. A task is created, or its URL or HMAC key changed,
 * only when the endpoint answered exactly 200.
 */
import { runTaskRequestHeaders, serializeRunTaskRequest, SIGNATURE_HEADERS, verificationRequest, type RunTaskUrls } from "../domain/run-task-request.js";
import { invalid } from "../errors.js";
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
 * A refused verification (D15) names the signature header it sent and the dialect, since an
 * integration written for HCP Terraform rejects a request signed in the default dialect's header.
 */
export function signatureHint(dialect: Dialect): string {
  const sent = `The request was signed in the ${SIGNATURE_HEADERS[dialect]} header (dialect "${dialect}")`;
  return dialect === "hcp-terraform"
    ? `${sent}.`
    : `${sent}; integrations written for HCP Terraform expect ${SIGNATURE_HEADERS["hcp-terraform"]}: use the "hcp-terraform" dialect.`;
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
      throw invalid(pointer, `The run task URL responded with ${res.status} to the verification request${quoted}; it must answer 200. ${signatureHint(dialect)}`);
    }
  };
}

/** A refused address points at the ways to a private integration; a refused URL's reason says its own fix. */
const wayOut = (code: string): string => (code === "refused-address" ? `; ${PRIVATE_WAY}` : "");
