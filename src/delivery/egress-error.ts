export const EGRESS_ERROR_CODES = ["refused-url", "refused-address", "dns-failure", "timeout", "network", "aborted"] as const;
export type EgressErrorCode = (typeof EGRESS_ERROR_CODES)[number];

/** Messages carry only a code and a fixed reason: never the URL, headers or body, which may hold secrets. */
export class EgressError extends Error {
  readonly code: EgressErrorCode;
  readonly reason: string | undefined;
  constructor(code: EgressErrorCode, message: string, reason?: string) {
    super(message);
    this.name = "EgressError";
    this.code = code;
    this.reason = reason;
  }
}

export const isEgressError = (value: unknown): value is EgressError =>
  value instanceof EgressError || (value instanceof Error && value.name === "EgressError");

export const refusal = (code: "refused-url" | "refused-address", reason: string): EgressError =>
  new EgressError(code, code === "refused-url" ? `outbound URL refused (${reason})` : `destination address refused (${reason})`, reason);

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT", "ETIMEDOUT"]);

export function toEgressError(err: unknown): EgressError {
  if (isEgressError(err)) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && TIMEOUT_CODES.has(code)) return new EgressError("timeout", `request timed out${safeCode(err)}`);
  return new EgressError("network", `network error${safeCode(err)}`);
}

/** Only a bare error code such as ECONNREFUSED: underlying messages may quote hosts or URLs. */
export function safeCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : "";
}
