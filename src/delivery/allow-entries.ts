/**
 * Parsing of egress allowlist entries (decision D15): CIDRs, IP addresses and host names, each but a
 * CIDR optionally with `:port`. Pure. The policy (address-policy.ts) matches destinations against
 * parsed entries; wide-entries.ts judges whether an entry is too wide to take (decision D38).
 */
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** `undefined` in an entry: any port. */
export type Port = number | undefined;
export type CidrEntry = { net: ipaddr.IPv4 | ipaddr.IPv6; bits: number; port: Port };
export type NameEntry = { name: string; port: Port };

export const normalizeName = (hostname: string): string => hostname.toLowerCase().replace(/\.$/, "");

/** A wrong allowlist entry; `reason` says what is wrong with it without repeating it. */
class AllowEntryError extends TypeError {
  readonly reason: string;
  constructor(entry: string, reason: string) {
    super(`egress.allow: ${JSON.stringify(entry)} ${reason}`);
    this.reason = reason;
  }
}

/**
 * What is wrong with one allowlist entry (`has an invalid port (1-65535)`), or null when
 * `createEgressPolicy` takes it; the caller names where the entry came from (the option, EGRESS_ALLOW).
 */
export function allowEntryProblem(entry: string): string | null {
  try {
    parseEntry(entry.trim());
    return null;
  } catch (error) {
    return error instanceof AllowEntryError ? error.reason : "is not a valid allowlist entry";
  }
}

const invalidEntry = (entry: string): TypeError =>
  new AllowEntryError(entry, "is not a CIDR, an IP address or a host name, each optionally with :port");

function parsePort(text: string, entry: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535) throw new AllowEntryError(entry, "has an invalid port (1-65535)");
  return port;
}

/** One entry, already trimmed; throws a TypeError naming what is wrong with it. */
export function parseEntry(entry: string): CidrEntry | NameEntry {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) throw new AllowEntryError(entry, "is a URL: give the host name or address alone, optionally with :port (scanner.internal:8443)");
  // [v6] or [v6]:port
  const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(entry);
  if (bracketed) {
    const address = bracketed[1] ?? "";
    if (isIP(address) !== 6) throw invalidEntry(entry);
    const port = bracketed[2] === undefined ? undefined : parsePort(bracketed[2], entry);
    return { net: ipaddr.parse(address), bits: 128, port };
  }
  // Exactly one colon: host:port (an IPv6 address always has at least two).
  const colon = entry.indexOf(":");
  if (colon !== -1 && colon === entry.lastIndexOf(":")) {
    const host = entry.slice(0, colon);
    const port = parsePort(entry.slice(colon + 1), entry);
    if (host === "") throw invalidEntry(entry);
    if (isIP(host) === 4) return { net: ipaddr.parse(host), bits: 32, port };
    return { name: parseName(host), port };
  }
  const cidr = parseCidr(entry);
  if (cidr) return { net: cidr[0], bits: cidr[1], port: undefined };
  return { name: parseName(entry), port: undefined };
}
function parseCidr(entry: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | null {
  const [address = "", bits, ...rest] = entry.split("/");
  if (rest.length > 0 || isIP(address) === 0) return null;
  const parsed = ipaddr.parse(address);
  const max = parsed.kind() === "ipv4" ? 32 : 128;
  if (bits === undefined) return [parsed, max];
  const prefix = Number(bits);
  if (!/^\d+$/.test(bits) || prefix > max) throw new AllowEntryError(entry, `has an invalid prefix length (0-${max})`);
  return [parsed, prefix];
}

/** A DNS name after URL canonicalization: letters, digits, `-` and `_` in dot-separated labels. */
const HOST_NAME = /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.?$/;

function parseName(entry: string): string {
  if (entry.includes("*")) throw new AllowEntryError(entry, "is a wildcard: wildcards are not supported, name each host (or its address)");
  // Canonicalize like a URL host (case, IDN to punycode) so entries match what checkUrl sees.
  let host = "";
  try {
    host = new URL(`http://${entry}/`).hostname;
  } catch {
    // fall through to the error below
  }
  // A loose IP (`10.1`) would otherwise become a name entry that only matches the literal host.
  if (host === "" || isIP(host.replace(/^\[|\]$/g, "")) !== 0 || /[/@:?#]/.test(entry)) {
    throw invalidEntry(entry);
  }
  if (!HOST_NAME.test(host)) throw new AllowEntryError(entry, "is not a valid host name (letters, digits, - and _ in dot-separated labels)");
  return normalizeName(host);
}
