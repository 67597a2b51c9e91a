import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * decision D32: a `log-read-url` carries its own credential, as HCP Terraform's archivist URLs do,
 * because go-tfe's log reader and integrations GET it without an Authorization header. The
 * capability names one log (plan or apply) of one run and when it expires, and is MACed with a
 * key every host of a cluster derives from the shared keyring: any host verifies it, none keeps
 * state. Pure: keys and the time are passed in.
 */

export const LOG_KINDS = ["plan", "apply"] as const;
export type LogKind = (typeof LOG_KINDS)[number];

export interface LogClaims {
  runId: string;
  kind: LogKind;
  /** Unix seconds after which the capability is refused. */
  expiresAt: number;
}

export type LogCapabilityCheck = { ok: true; claims: LogClaims } | { ok: false; reason: "malformed" | "forged" | "expired" };

const PREFIX = "rplog1";
/** Longer than any capability this module writes (run ids are bounded): refused before any work. */
export const MAX_CAPABILITY_LENGTH = 512;
const SHAPE = /^rplog1\.([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{43})$/;

const mac = (key: Uint8Array, signed: string): Buffer => createHmac("sha256", key).update(signed, "utf8").digest();

/** The capability for `claims`, MACed with `key` (the active key's derived MAC key). */
export function signLogCapability(claims: LogClaims, key: Uint8Array): string {
  const payload = Buffer.from(`${claims.kind}\n${claims.expiresAt}\n${claims.runId}`, "utf8").toString("base64url");
  const signed = `${PREFIX}.${payload}`;
  return `${signed}.${mac(key, signed).toString("base64url")}`;
}

function parseClaims(payload: string): LogClaims | null {
  const [kind, expires, runId, ...rest] = Buffer.from(payload, "base64url").toString("utf8").split("\n");
  if (rest.length > 0 || !runId || !/^\d{1,12}$/.test(expires ?? "")) return null;
  if (!(LOG_KINDS as readonly string[]).includes(kind ?? "")) return null;
  return { runId, kind: kind as LogKind, expiresAt: Number(expires) };
}

/**
 * Whether `part` is the one base64url spelling of its bytes: the last character's spare bits are
 * zero (the decoder ignores them, so without this a capability had 4 spellings, and a "changed"
 * last character verified 1 time in 4).
 */
const isCanonical = (part: string): boolean => Buffer.from(part, "base64url").toString("base64url") === part;

/**
 * Checks `capability` against every key held (`keys`, derived MAC keys: one signed it, maybe
 * before a rotation) in constant time per key, then its expiry against `nowSeconds`.
 */
export function verifyLogCapability(capability: string, keys: readonly Uint8Array[], nowSeconds: number): LogCapabilityCheck {
  const match = capability.length <= MAX_CAPABILITY_LENGTH ? SHAPE.exec(capability) : null;
  if (!match) return { ok: false, reason: "malformed" };
  // Every capability has exactly one spelling: any other is no capability this module wrote.
  if (!isCanonical(match[2]!)) return { ok: false, reason: "forged" };
  if (!isCanonical(match[1]!)) return { ok: false, reason: "malformed" };
  const given = Buffer.from(match[2]!, "base64url");
  const signed = `${PREFIX}.${match[1]!}`;
  if (!keys.some((key) => timingSafeEqual(mac(key, signed), given))) return { ok: false, reason: "forged" };
  const claims = parseClaims(match[1]!);
  if (!claims) return { ok: false, reason: "malformed" };
  if (nowSeconds >= claims.expiresAt) return { ok: false, reason: "expired" };
  return { ok: true, claims };
}

/**
 * A run of URL-ish characters, percent escapes and `\\uXXXX` escapes: how a capability travels in
 * a path, a query or a JSON string, however an echo escapes it; decision D42: HTML's names a reader
 * takes for the token's `-` and `_` (`&hyphen;`, `&dash;`, `&minus;`, `&lowbar;`, `&UnderBar;`) too.
 */
const URLISH_RUN = /(?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|&(?:hyphen|dash|minus|lowbar|UnderBar);)+/g;
const ESCAPE = /%([0-9A-Fa-f]{2})|\\u([0-9A-Fa-f]{4})/g;
const unescaped = (run: string): string => run.replace(ESCAPE, (_, pct?: string, u?: string) => String.fromCharCode(parseInt(pct ?? u!, 16)));
const HOLDS_CAPABILITY = /rplog1\./i;

/**
 * `text` with every capability in it replaced by `[redacted]`: for log lines and stored excerpts.
 * Found in each run of URL-ish characters once its escapes are decoded, so `rplog1%2E...` or a
 * `\\u002e` echo is caught as well as the exact spelling (the route refuses encoded ones, but a
 * reader of the log could decode them by hand).
 */
export const redactLogCapabilities = (text: string): string =>
  text.replace(URLISH_RUN, (run) => (HOLDS_CAPABILITY.test(run.includes("%") || run.includes("\\") ? unescaped(run) : run) ? "[redacted]" : run));
