/**
 * The pure half of the SSRF guard (decision D15, vectors in design/ssrf-vectors.md): which
 * destination addresses and URLs outbound HTTP may use. No I/O here; egress.ts applies these
 * checks to the address each socket is about to connect to.
 */
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { normalizeName, parseEntry, type CidrEntry, type NameEntry, type Port } from "./allow-entries.js";
import { isNeverWithoutWide } from "./wide-entries.js";

export { allowEntryProblem } from "./allow-entries.js";

/**
 * Why an address is refused. Mostly ipaddr.js range names; its .d.ts misses a few names that
 * range() really returns (discard, deprecatedSiteLocal, deprecatedOrchid, segmentRouting), so the
 * list is ours and anything unknown falls back to `reserved`.
 */
export const REFUSAL_REASONS = [
  "invalid",
  "unspecified",
  "broadcast",
  "multicast",
  "linkLocal",
  "loopback",
  "carrierGradeNat",
  "private",
  "reserved",
  "benchmarking",
  "amt",
  "as112",
  "uniqueLocal",
  "deprecatedSiteLocal",
  "discard",
  "rfc6145",
  "rfc6052",
  "teredo",
  "as112v6",
  "deprecatedOrchid",
  "orchid2",
  "droneRemoteIdProtocolEntityTags",
  "segmentRouting",
  "notGlobalUnicast",
  // decision D38: a public address of the host's own interfaces (its services listening on 0.0.0.0).
  "ownAddress",
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];
export type AddressClass = "public" | RefusalReason;

const KNOWN_REASONS: ReadonlySet<string> = new Set(REFUSAL_REASONS);
const toReason = (range: string): RefusalReason =>
  KNOWN_REASONS.has(range) ? (range as RefusalReason) : "reserved";

const NAT64_WELL_KNOWN = ipaddr.parseCIDR("64:ff9b::/96");

/**
 * Classifies one address as the socket would see it. Only a public unicast address passes.
 * The input must be a canonical IP literal (what DNS or `new URL()` produce): `net.isIP` gates it,
 * because ipaddr.js alone also accepts loose forms such as `127.1` or `0x7f.1`.
 */
export function classifyAddress(ip: string): AddressClass {
  if (isIP(ip) === 0) return "invalid";
  const address = ipaddr.parse(ip);
  return address.kind() === "ipv4" ? classifyV4(address as ipaddr.IPv4) : classifyV6(address as ipaddr.IPv6);
}

function classifyV4(address: ipaddr.IPv4): AddressClass {
  // as112 and amt are anycast special-purpose blocks: refused too, only plain unicast passes.
  const range: string = address.range();
  return range === "unicast" ? "public" : toReason(range);
}

function classifyV6(address: ipaddr.IPv6): AddressClass {
  const range: string = address.range();
  switch (range) {
    // The kernel sends ::ffff:a.b.c.d to the IPv4 address itself.
    case "ipv4Mapped":
      return classifyV4(address.toIPv4Address());
    // 64:ff9b::/96 reaches the embedded IPv4 through the NAT64 gateway; the local-use
    // 64:ff9b:1::/48 is never global, so it is refused as a whole.
    case "rfc6052":
      return address.match(NAT64_WELL_KNOWN) ? classifyV4(embeddedV4(address, 6)) : "rfc6052";
    // 2002:AABB:CCDD::/48 is relayed to AA.BB.CC.DD.
    case "6to4":
      return classifyV4(embeddedV4(address, 1));
    case "unicast":
      // ipaddr.js calls everything it does not name "unicast"; IANA allocates global unicast only
      // from 2000::/3, so ::/8 (IPv4-compatible), 4000::/2 and the like are refused.
      return ((address.parts[0] ?? 0) & 0xe000) === 0x2000 ? "public" : "notGlobalUnicast";
    default:
      return toReason(range);
  }
}

/** The IPv4 address NAT64 (64:ff9b::/96) or 6to4 (2002::/16) relays `address` to, or null. */
function relayedV4(address: ipaddr.IPv6): string | null {
  if (address.match(NAT64_WELL_KNOWN)) return embeddedV4(address, 6).toString();
  if (address.range() === "6to4") return embeddedV4(address, 1).toString();
  return null;
}

function embeddedV4(address: ipaddr.IPv6, firstPart: number): ipaddr.IPv4 {
  const high = address.parts[firstPart] ?? 0;
  const low = address.parts[firstPart + 1] ?? 0;
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

export type UrlCheck =
  | { ok: true; url: URL; hostname: string; port: number }
  | { ok: false; code: "refused-url" | "refused-address"; reason: string };

export type AddressCheck = { ok: true } | { ok: false; reason: RefusalReason };

export interface EgressPolicy {
  /** Scheme, userinfo and host-name rules, and the address rule for literal IP hosts. */
  checkUrl(url: string): UrlCheck;
  /**
   * Whether a socket for `hostname` may connect to `ip` (a resolved or literal address) on `port`.
   * Without a port, only allowlist entries that name no port can admit it.
   */
  checkAddress(ip: string, hostname: string, port?: number): AddressCheck;
}

export interface EgressPolicyOptions {
  /**
   * CIDRs (`127.0.0.1/32`, `fd00::/8`; a bare IP such as `10.0.0.5`, `::1` or `[::1]` means a single
   * address) and exact host names. Any of them but a CIDR may name a port (`127.0.0.1:8081`,
   * `[::1]:8081`, `host.internal:443`): the entry then admits that address or name on that port
   * only, default ports included (`http://host.internal/` is port 80). Entries without a port admit
   * any port. A host-name entry trusts that one name whatever it resolves to: the operator vouches
   * for the name's DNS. It does not cover subdomains or other names resolving to the same address.
   */
  allow?: readonly string[];
  /**
   * decision D38: the operator accepts wide entries. Without it a host-name entry never admits a
   * link-local, metadata or unspecified address (the entry checks of wide-entries.ts refuse CIDRs
   * that reach them before a policy is built).
   */
  wide?: boolean;
  /**
   * decision D38: the addresses of this host's own interfaces. A public one of them is refused like
   * a private address (it reaches the host's own listeners, 0.0.0.0 ones included) unless an
   * allowlist entry admits it. Read at each check, so the caller may refresh it.
   */
  ownAddresses?: () => ReadonlySet<string>;
  /**
   * decision D38, for `wide` lists that must still not reach metadata services (the agent's: whole
   * private ranges are its job): link-local, metadata and unspecified addresses (wide-entries.ts)
   * stay refused inside a wide entry, unless an entry names that exact address.
   */
  keepNeverRefused?: boolean;
}

const portMatches = (entryPort: Port, port: Port): boolean => entryPort === undefined || entryPort === port;

/** The port a URL connects to: its explicit port, else the scheme's default. */
export const urlPort = (url: URL): number => (url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80);

/**
 * The rules every outbound URL meets before any address is judged: it parses, is http(s), and
 * carries no user name or password. Shared by the egress policy and the pool tasks' (D34).
 */
export function parseOutboundUrl(raw: string): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, code: "refused-url", reason: "invalid-url" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, code: "refused-url", reason: "scheme" };
  if (url.username !== "" || url.password !== "") return { ok: false, code: "refused-url", reason: "userinfo" };
  return { ok: true, url, hostname: url.hostname, port: urlPort(url) };
}

export function createEgressPolicy(options: EgressPolicyOptions = {}): EgressPolicy {
  const cidrs: CidrEntry[] = [];
  const names: NameEntry[] = [];
  for (const raw of options.allow ?? []) {
    const entry = parseEntry(raw.trim());
    if ("net" in entry) cidrs.push(entry);
    else names.push(entry);
  }

  const nameAllowed = (hostname: string, port: Port): boolean => {
    const name = normalizeName(hostname);
    return names.some((entry) => entry.name === name && portMatches(entry.port, port));
  };

  const inAllowedCidr = (ip: string, port: Port): boolean => {
    const parsed = ipaddr.parse(ip);
    // An allow entry for 127.0.0.1/32 also admits ::ffff:127.0.0.1: the same socket destination.
    const forms = parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
      ? [parsed, (parsed as ipaddr.IPv6).toIPv4Address()]
      : [parsed];
    return cidrs.some(({ net, bits, port: entryPort }) =>
      portMatches(entryPort, port) && forms.some((form) => form.kind() === net.kind() && form.match(net, bits)));
  };

  const namedExactly = (ip: string, port: Port): boolean => {
    const parsed = ipaddr.process(ip);
    return cidrs.some(({ net, bits, port: entryPort }) => portMatches(entryPort, port) && net.kind() === parsed.kind() && bits === (net.kind() === "ipv4" ? 32 : 128) && parsed.match(net, bits));
  };

  const isOwn = (ip: string): boolean => {
    const own = options.ownAddresses?.();
    if (own === undefined || own.size === 0) return false;
    const parsed = ipaddr.process(ip); // ::ffff:a.b.c.d is the IPv4 address itself
    return own.has(parsed.toString()) || own.has(ip) || (parsed.kind() === "ipv6" && own.has(relayedV4(parsed as ipaddr.IPv6) ?? ""));
  };

  const checkAddress = (ip: string, hostname: string, port?: number): AddressCheck => {
    const classified = classifyAddress(ip);
    const verdict: AddressClass = classified === "public" && isOwn(ip) ? "ownAddress" : classified;
    if (verdict === "public") return { ok: true };
    // A name entry vouches for the name's DNS, but not for a metadata service behind it (D38).
    if (nameAllowed(hostname, port)) return (options.wide && !options.keepNeverRefused) || !isNeverWithoutWide(ip) ? { ok: true } : { ok: false, reason: verdict };
    if (verdict !== "invalid" && inAllowedCidr(ip, port)) {
      return options.keepNeverRefused && isNeverWithoutWide(ip) && !namedExactly(ip, port) ? { ok: false, reason: verdict } : { ok: true };
    }
    return { ok: false, reason: verdict };
  };

  const checkUrl = (raw: string): UrlCheck => {
    const parsed = parseOutboundUrl(raw);
    if (!parsed.ok) return parsed;
    const { url, port } = parsed;
    // `new URL()` has already turned 0x7f.1, 2130706433 and friends into dotted quads.
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    if (isIP(host) !== 0) {
      const check = checkAddress(host, host, port);
      return check.ok ? { ok: true, url, hostname: host, port } : { ok: false, code: "refused-address", reason: check.reason };
    }
    const name = normalizeName(host);
    if (!nameAllowed(name, port)) {
      if (name === "localhost" || name.endsWith(".localhost")) return { ok: false, code: "refused-url", reason: "localhost" };
      // Single labels go through search domains to whatever the intranet calls `intranet`.
      if (!name.includes(".")) return { ok: false, code: "refused-url", reason: "single-label" };
    }
    return { ok: true, url, hostname: host, port };
  };

  return { checkUrl, checkAddress };
}

