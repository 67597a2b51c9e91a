/**
 * decision D38: which egress allowlist entries are too wide to take without the operator's explicit
 * `wide` switch. An allowlist entry lets anyone who may manage run tasks send requests, and read
 * answers, inside the networks it covers; a wide one turns the platform into a reader of internal
 * services. Pure.
 */
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { normalizeName, parseEntry, type CidrEntry } from "./allow-entries.js";

/**
 * The shortest prefix an entry inside a private range may have: a /16 of an IPv4 private range
 * (`10.1.0.0/16`, not `10.0.0.0/12`) and a /48 of the IPv6 unique local range (one site's prefix).
 */
export interface MinPrefix {
  ipv4: number;
  ipv6: number;
}

export const DEFAULT_MIN_PREFIX: MinPrefix = { ipv4: 16, ipv6: 48 };

type Net = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * The ranges an entry is judged against. `bound`: entries inside the range may be no wider than the
 * configured prefix, and one covering the whole range is wide whatever its prefix; `never`: an entry
 * that reaches any address of it is wide (cloud metadata services answer there, and 0.0.0.0 or `::`
 * reach every local listener at once).
 */
const RANGES: readonly { cidr: string; what: string; bound: "ipv4" | "ipv6" | "never" }[] = [
  { cidr: "10.0.0.0/8", what: "the private range 10.0.0.0/8", bound: "ipv4" },
  { cidr: "172.16.0.0/12", what: "the private range 172.16.0.0/12", bound: "ipv4" },
  { cidr: "192.168.0.0/16", what: "the private range 192.168.0.0/16", bound: "ipv4" },
  { cidr: "100.64.0.0/10", what: "the shared (carrier-grade NAT) range 100.64.0.0/10", bound: "ipv4" },
  { cidr: "127.0.0.0/8", what: "the loopback range 127.0.0.0/8", bound: "ipv4" },
  { cidr: "fc00::/7", what: "the unique local range fc00::/7", bound: "ipv6" },
  { cidr: "0.0.0.0/8", what: "0.0.0.0/8 (0.0.0.0 reaches every listener of the host)", bound: "never" },
  { cidr: "::/128", what: "the unspecified address :: (it reaches every listener of the host)", bound: "never" },
  { cidr: "169.254.0.0/16", what: "the link-local range 169.254.0.0/16, where cloud metadata services answer", bound: "never" },
  { cidr: "fe80::/10", what: "the link-local range fe80::/10", bound: "never" },
  { cidr: "fd00:ec2::254/128", what: "the cloud metadata address fd00:ec2::254", bound: "never" },
  { cidr: "100.100.100.200/32", what: "the cloud metadata address 100.100.100.200", bound: "never" },
  // RFC 8215 lets a network embed IPv4 at any of RFC 6052's positions under this prefix, and Teredo
  // hides the client's IPv4 address: what they reach cannot be read off the address.
  { cidr: "64:ff9b:1::/48", what: "the local-use NAT64 range 64:ff9b:1::/48, which may carry any IPv4 address", bound: "never" },
  { cidr: "2001::/32", what: "the Teredo range 2001::/32, which tunnels to an IPv4 address", bound: "never" },
];
const PARSED = RANGES.map((range) => ({ ...range, net: ipaddr.parseCIDR(range.cidr) as Net }));

const contains = ([outer, outerBits]: Net, [inner, innerBits]: Net): boolean =>
  outer.kind() === inner.kind() && outerBits <= innerBits && inner.match(outer, outerBits);
const overlaps = (a: Net, b: Net): boolean => contains(a, b) || contains(b, a);

/**
 * The IPv6 forms that carry an IPv4 address in their last 32 bits (or, for 6to4, bits 16-47), and
 * so reach it: the kernel sends `::ffff:a.b.c.d` to the IPv4 address itself, NAT64 (64:ff9b::/96)
 * and 6to4 (2002::/16) relay to it, and the IPv4-translated (`::ffff:0:a.b.c.d`, RFC 2765) and
 * IPv4-compatible (`::a.b.c.d`, deprecated) forms may be translated to it on the way. Judged by the
 * IPv4 network whatever the spelling (`::a9fe:a9fe` is `::169.254.169.254`).
 */
const CARRIERS: readonly [prefix: string, at: number, width: number][] = [
  ["::ffff:0:0", 6, 96],
  ["::ffff:0:0:0", 6, 96],
  ["::", 6, 96],
  ["64:ff9b::", 6, 96],
  ["2002::", 1, 16],
];
/** `::` and `::1` are the IPv6 unspecified and loopback addresses, not IPv4-compatible ones. */
const NOT_COMPATIBLE = ipaddr.parseCIDR("::/127") as Net;

/** The IPv4 networks an IPv6 entry reaches through addresses that carry an IPv4 address. */
export function embeddedV4(net: ipaddr.IPv6, bits: number): Net[] {
  const out: Net[] = [];
  for (const [prefix, at, width] of CARRIERS) {
    const carrier = ipaddr.parseCIDR(`${prefix}/${width}`) as Net;
    if (!overlaps([net, bits], carrier)) continue;
    if (prefix === "::" && contains(NOT_COMPATIBLE, [net, bits])) continue;
    const high = net.parts[at] ?? 0;
    const low = net.parts[at + 1] ?? 0;
    const v4 = new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
    out.push([v4, Math.min(32, Math.max(0, bits - width))]);
  }
  return out;
}

/** Why one network is wide, or null. */
function wideNet(entry: Net, minPrefix: MinPrefix): string | null {
  const [net, bits] = entry;
  if (bits === 0) return `covers every ${net.kind() === "ipv4" ? "IPv4" : "IPv6"} address`;
  for (const range of PARSED) {
    if (!overlaps(entry, range.net)) continue;
    if (range.bound === "never") return `reaches into ${range.what}`;
    if (contains(entry, range.net)) return `covers the whole of ${range.what}`;
    const min = minPrefix[range.bound];
    if (bits < min) return `covers a /${bits} of ${range.what}, wider than /${min}`;
  }
  return null;
}

/** Host names of the cloud metadata services at the addresses above (GCP, AWS, and the short forms). */
const METADATA_NAMES = new Set(["metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"]);

/**
 * Why an allowlist entry is wide (`covers the whole of the private range 10.0.0.0/8`), or null when
 * it is narrow enough, or is not a valid entry at all (allowEntryProblem says that). A host-name
 * entry is wide here only when it names a metadata service: its addresses are unknown until it resolves, so the policy refuses a
 * metadata or link-local address behind a name at connect time instead (see isNeverWithoutWide).
 */
export function wideEntryProblem(entry: string, minPrefix: MinPrefix = DEFAULT_MIN_PREFIX): string | null {
  let parsed: ReturnType<typeof parseEntry>;
  try {
    parsed = parseEntry(entry.trim());
  } catch {
    return null;
  }
  // decision D43: the names cloud metadata services answer under, as wide as their addresses.
  if (!("net" in parsed)) return METADATA_NAMES.has(normalizeName(parsed.name)) ? `names a cloud metadata service (${normalizeName(parsed.name)})` : null;
  const { net, bits }: CidrEntry = parsed;
  const nets: Net[] = [[net, bits], ...(net.kind() === "ipv6" ? embeddedV4(net as ipaddr.IPv6, bits) : [])];
  for (const candidate of nets) {
    const problem = wideNet(candidate, minPrefix);
    if (problem) return problem;
  }
  return null;
}

/**
 * Whether `ip` lies where no entry reaches without the `wide` switch (link-local, metadata addresses,
 * the unspecified addresses): a host-name entry must not carry a request there either.
 */
export function isNeverWithoutWide(ip: string): boolean {
  if (isIP(ip) === 0) return false;
  const address = ipaddr.process(ip);
  const bits = address.kind() === "ipv4" ? 32 : 128;
  const nets: Net[] = [[address, bits], ...(address.kind() === "ipv6" ? embeddedV4(address as ipaddr.IPv6, bits) : [])];
  return nets.some((net) => PARSED.some((range) => range.bound === "never" && contains(range.net, net)));
}

/** What the operator is told besides the reason: where private integrations belong, and the switch. */
export const WIDE_ADVICE =
  "private integrations belong behind agents (decision D34, private run tasks through agents), not behind a wide allowlist entry; " +
  "list the integration's own address (best with its port) or a network no wider than the bound";
