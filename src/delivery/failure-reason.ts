/**
 * Words for why an outbound request failed (decision D15): stored as a delivery's `lastError`,
 * shown in result messages and 422 details. Built from error codes and fixed reasons, never from a
 * URL or header; an answer's body only as its D31 excerpt, with the request's access
 * token, HMAC key and signature redacted, so nothing secret can reach storage or a response.
 */
import { STATUS_CODES } from "node:http";
import { responseExcerpt, type Excerpt } from "../domain/response-excerpt.js";
import { isEgressError, type HttpResponse } from "./egress.js";

const URL_REASONS: Record<string, string> = {
  "invalid-url": "it is not a valid URL",
  scheme: "only http and https URLs are allowed",
  userinfo: "a URL must not carry a user name or password",
  localhost: "localhost names are not allowed",
  "single-label": "single-label host names are not allowed; use a fully qualified name",
  "agent-pool": "the run task names an agent pool: only its agents send its requests",
};

/** The address classes (address-policy.ts) whose name does not read as words on its own. */
const ADDRESS_CLASSES: Record<string, string> = {
  linkLocal: "link-local",
  carrierGradeNat: "carrier-grade NAT",
  uniqueLocal: "unique local",
  deprecatedSiteLocal: "site-local",
  notGlobalUnicast: "not global unicast",
  ownAddress: "this host's own address",
  rfc6052: "NAT64",
  rfc6145: "IPv4-translated",
  as112v6: "AS112",
  as112: "AS112",
  amt: "AMT",
  deprecatedOrchid: "ORCHID",
  orchid2: "ORCHIDv2",
  droneRemoteIdProtocolEntityTags: "drone remote ID",
  segmentRouting: "segment routing",
};

/** Why a URL or destination address is refused, from the policy's reason code. */
export function refusalReason(code: "refused-url" | "refused-address", reason: string | undefined): string {
  if (code === "refused-url") return URL_REASONS[reason ?? ""] ?? "the URL is refused";
  const name = reason ?? "reserved";
  return `the destination address is not public (${ADDRESS_CLASSES[name] ?? name})`;
}

/** What the 422 of a refused task URL adds: the ways to a private integration (D34, D38). */
export const PRIVATE_WAY =
  "an integration inside a private network is reached through an agent pool (the task's agent-pool), a single address through an egress allowlist entry";

/** True when the request was refused by the SSRF guard rather than failing on the network. */
export const isRefusal = (err: unknown): boolean => isEgressError(err) && (err.code === "refused-url" || err.code === "refused-address");

/** Why a transport call threw, e.g. `the connection failed (ECONNREFUSED)`. */
export function failureReason(err: unknown): string {
  // decision D34: no agent of the pool took the request, or none reported it in time.
  if (err instanceof Error && err.name === "AgentUnavailableError") return "no agent of the run task's pool sent the request in time";
  if (!isEgressError(err)) return "the request failed";
  const code = /\(([A-Z0-9_]{1,40})\)/.exec(err.message)?.[1];
  switch (err.code) {
    case "refused-url":
    case "refused-address":
      return refusalReason(err.code, err.reason);
    case "timeout":
      return "the request timed out";
    case "dns-failure":
      return "the host name could not be resolved";
    case "aborted":
      return "the request was abandoned";
    case "network":
      return `the connection failed${code ? ` (${code})` : ""}`;
  }
}

/**
 * Why a response that arrived does not count: anything but exactly 200 (spec 4.1), followed by
 * what the integration said when it said something (D31: `responded with 404: unsupported
 * plan format version ...`), as {@link answerWords} gives it.
 */
/** `401 Unauthorized`: the status with its reason phrase (just the number when it has none). */
export function statusText(status: number): string {
  const reason = STATUS_CODES[status];
  return reason ? `${status} ${reason}` : String(status);
}

export const statusReason = (status: number, said: string | null = null): string => `responded with ${status}${said ? `: ${said}` : ""}`;

/** How much of the integration's words follow runplane's own in a delivery's last error, a result's message and a log line. */
export const WORDS_IN_REASON = 200;

/**
 * An excerpt as words on one line, to follow runplane's own: whitespace runs become one space,
 * and a cut (by the excerpt or at `maxChars`, counted in code points) ends in `...`.
 */
export function answerLine(excerpt: Excerpt, maxChars = Infinity): string | null {
  const flat = (excerpt.text ?? "").replace(/\s+/g, " ").trim();
  if (flat === "") return null;
  const chars = Array.from(flat);
  if (chars.length > maxChars) return `${chars.slice(0, Math.max(0, maxChars - 3)).join("").trimEnd()}...`;
  return excerpt.truncated ? `${flat}...` : flat;
}

/**
 * decision D31: what an answer said, as words on one line (at most `maxChars`), with `secrets`
 * (the request's access token, HMAC key and signature) redacted wherever they appear; null when
 * it said nothing readable (no body, not text). `secrets` is only called for an answer with a body.
 */
export function answerWords(res: HttpResponse, secrets: () => readonly string[], maxChars?: number): string | null {
  if (res.body === "") return null;
  // A host's transport may spell header names in any case.
  const contentType = Object.entries(res.headers).find(([name]) => name.toLowerCase() === "content-type")?.[1];
  return answerLine(responseExcerpt({ body: res.body, contentType, truncated: res.bodyTruncated, secrets: secrets() }), maxChars);
}

/**
 * decision D31: the short code of why a transport call threw, for an attempt's record: the system
 * error of a failed connection (`ECONNREFUSED`, `ECONNRESET`), else the egress's own code
 * (`timeout`, `dns-failure`, `refused-address`, ...). Codes only, never a message.
 */
export function failureCode(err: unknown): string {
  if (!isEgressError(err)) return "error";
  const code = err.code === "network" ? /\(([A-Z0-9_]{1,40})\)/.exec(err.message)?.[1] : undefined;
  return code ?? err.code;
}
