import { SIGNATURE_HEADERS, verifySignature } from "../domain/run-task-request.js";

const encoder = new TextEncoder();

/**
 * Checks the run task signature header (spec 4.1, decisions D1, D14), in constant time.
 *
 * - With an HMAC key: the header must be the hex HMAC-SHA512 of exactly `rawBody`, keyed with it
 *   (lower case as sent; upper case is accepted). Pass the bytes as received: a body re-serialized
 *   after parsing, or text decoded and re-encoded, may not be the bytes that were signed.
 * - Without a key (`null`, `undefined` or `""`): only an empty or absent header verifies. The
 *   service sends an empty header when its run task has no key, so a non-empty one means the two
 *   sides disagree about the key, and that is refused rather than ignored.
 */
export function verifyRunTaskSignature(
  rawBody: Uint8Array | string,
  headerValue: string | null | undefined,
  hmacKey: string | null | undefined,
): boolean {
  const header = headerValue?.trim() ?? "";
  // An empty key is no key, as on the sending side: it would authenticate nothing.
  if (hmacKey === null || hmacKey === undefined || hmacKey === "") return header === "";
  const bytes = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody;
  return verifySignature(bytes, header, hmacKey);
}

export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

// decision D1: HCP Terraform sends X-TFC-Task-Signature, runplane's default dialect X-SVC-Task-Signature.
const HEADER_NAMES = [SIGNATURE_HEADERS["hcp-terraform"], SIGNATURE_HEADERS.default].map((name) => name.toLowerCase());

// Duck-typed: undici's own Headers class is not the global one, so `instanceof` would miss it.
const isHeaders = (headers: HeaderSource): headers is Headers => typeof (headers as Headers).get === "function";

function lookup(headers: Exclude<HeaderSource, Headers>, lowerName: string): string | null {
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== lowerName || value === undefined) continue;
    // Joined like Headers#get joins repeats, which then fails verification: one signature is expected.
    return typeof value === "string" ? value : value.join(", ");
  }
  return null;
}

/**
 * The signature header value from Web `Headers` or a Node-style header record, under either name
 * of decision D1 (`X-TFC-Task-Signature` wins when both are present), matched case-insensitively.
 * `null` when neither is present.
 */
export function signatureFromHeaders(headers: HeaderSource): string | null {
  for (const name of HEADER_NAMES) {
    const value = isHeaders(headers) ? headers.get(name) : lookup(headers, name);
    if (value !== null) return value;
  }
  return null;
}
