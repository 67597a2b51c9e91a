/**
 * Words for why an outbound request failed (decision D15): stored as a delivery's `lastError`,
 * shown in result messages and 422 details. Built from error codes and fixed reasons only, never
 * from a URL, header or body, so nothing secret can reach storage or a response this way.
 */
import { isEgressError } from "./egress.js";

const URL_REASONS: Record<string, string> = {
  "invalid-url": "it is not a valid URL",
  scheme: "only http and https URLs are allowed",
  userinfo: "a URL must not carry a user name or password",
  localhost: "localhost names are not allowed",
  "single-label": "single-label host names are not allowed; use a fully qualified name",
};

/** Why a URL or destination address is refused, from the policy's reason code. */
export function refusalReason(code: "refused-url" | "refused-address", reason: string | undefined): string {
  if (code === "refused-url") return URL_REASONS[reason ?? ""] ?? "the URL is refused";
  return `the destination address is not public (${reason ?? "reserved"})`;
}

/** True when the request was refused by the SSRF guard rather than failing on the network. */
export const isRefusal = (err: unknown): boolean => isEgressError(err) && (err.code === "refused-url" || err.code === "refused-address");

/** Why a transport call threw, e.g. `the connection failed (ECONNREFUSED)`. */
export function failureReason(err: unknown): string {
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

/** Why a response that arrived does not count: anything but exactly 200 (spec 4.1). */
export const statusReason = (status: number): string => `responded with ${status}`;

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
