/**
 * decision D43: an egress allowlist judged as a whole, not one entry at a time. Entries narrow
 * enough each (D38) may still together admit a whole private range (two /17s are 192.168.0.0/16,
 * 256 /16s are 10.0.0.0/8) or more private addresses than one entry may; and a loopback entry
 * without a port admits every service of the host (its own API, its database). Pure.
 */
import ipaddr from "ipaddr.js";
import { normalizeName, parseEntry } from "./allow-entries.js";
import { DEFAULT_MIN_PREFIX, embeddedV4, wideEntryProblem, type MinPrefix } from "./wide-entries.js";

/** Why some entries together are wide: the entries, and what they do together. */
export interface WideTogether {
  entries: string[];
  problem: string;
}

/** The private ranges whose addresses are counted (the `bound` ranges of wide-entries.ts). */
const RANGES: readonly { cidr: string; what: string; family: "ipv4" | "ipv6"; counted?: false }[] = [
  { cidr: "10.0.0.0/8", what: "the private range 10.0.0.0/8", family: "ipv4" },
  { cidr: "172.16.0.0/12", what: "the private range 172.16.0.0/12", family: "ipv4" },
  { cidr: "192.168.0.0/16", what: "the private range 192.168.0.0/16", family: "ipv4" },
  { cidr: "100.64.0.0/10", what: "the shared (carrier-grade NAT) range 100.64.0.0/10", family: "ipv4" },
  // Loopback is judged by its ports (portlessLoopback), not counted: one integration beside the server is one address.
  { cidr: "127.0.0.0/8", what: "the loopback range 127.0.0.0/8", family: "ipv4", counted: false },
  { cidr: "fc00::/7", what: "the unique local range fc00::/7", family: "ipv6" },
];

type Interval = [start: bigint, end: bigint];

/** The addresses of `address/bits` as an interval of integers (end inclusive). */
function interval(address: ipaddr.IPv4 | ipaddr.IPv6, bits: number): Interval {
  const width = address.kind() === "ipv4" ? 32 : 128;
  const start = address.toByteArray().reduce((n, byte) => (n << 8n) | BigInt(byte), 0n) & ~((1n << BigInt(width - bits)) - 1n);
  return [start, start + (1n << BigInt(width - bits)) - 1n];
}
const PARSED = RANGES.map((range) => {
  const [address, bits] = ipaddr.parseCIDR(range.cidr);
  return { ...range, span: interval(address, bits) };
});

/** How many addresses of `range` the intervals cover together. */
function covered(intervals: readonly Interval[], [low, high]: Interval): bigint {
  const clipped = intervals.flatMap(([s, e]): Interval[] => (e < low || s > high ? [] : [[s < low ? low : s, e > high ? high : e]]));
  clipped.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let total = 0n;
  let reach = low - 1n;
  for (const [s, e] of clipped) {
    if (e <= reach) continue;
    total += e - (s > reach ? s : reach + 1n) + 1n;
    reach = e;
  }
  return total;
}

const LOOPBACK_V4 = ipaddr.parseCIDR("127.0.0.0/8");
const LOOPBACK_NAMES = /^(?:localhost|(?:[a-z0-9_-]+\.)*localhost)$/;

/**
 * Whether an entry is a loopback address or name without a port: every listener of the host,
 * the server's own API and its database among them (the reference server's EGRESS_ALLOW).
 */
export function portlessLoopback(entry: string): boolean {
  try {
    const parsed = parseEntry(entry.trim());
    if (parsed.port !== undefined) return false;
    if ("name" in parsed) return LOOPBACK_NAMES.test(normalizeName(parsed.name));
    if (parsed.net.kind() === "ipv4") return parsed.net.match(LOOPBACK_V4);
    // IPv4-mapped, NAT64 and 6to4 spellings of 127.0.0.1 reach it as well (found from outside).
    return parsed.net.toNormalizedString() === "0:0:0:0:0:0:0:1" || embeddedV4(parsed.net as ipaddr.IPv6, parsed.bits).some(([v4]) => v4.match(LOOPBACK_V4));
  } catch {
    return false;
  }
}

/**
 * The entries that are wide only together: of the entries not wide on their own, the private
 * addresses they admit, range by range (no range whole) and in all (no more than one entry of the
 * bound may admit: a /16 of IPv4, a /48 of fc00::/7; loopback not counted). Empty when the
 * allowlist is tight.
 */
export function wideTogether(entries: readonly string[], minPrefix: MinPrefix = DEFAULT_MIN_PREFIX): WideTogether[] {
  const nets = entries.flatMap((entry) => {
    if (wideEntryProblem(entry, minPrefix) !== null) return [];
    try {
      const parsed = parseEntry(entry.trim());
      return "net" in parsed ? [{ entry, family: parsed.net.kind(), span: interval(parsed.net, parsed.bits) }] : [];
    } catch {
      return [];
    }
  });
  const out: WideTogether[] = [];
  for (const family of ["ipv4", "ipv6"] as const) {
    const mine = nets.filter((n) => n.family === family);
    const names = (span: Interval) => mine.filter((n) => covered([n.span], span) > 0n).map((n) => n.entry);
    let total = 0n;
    let whole = false;
    for (const range of PARSED.filter((r) => r.family === family)) {
      const count = covered(mine.map((n) => n.span), range.span);
      if (range.counted !== false) total += count;
      if (count !== range.span[1] - range.span[0] + 1n) continue;
      whole = true;
      out.push({ entries: names(range.span), problem: `together cover the whole of ${range.what}` });
    }
    const bound = family === "ipv4" ? minPrefix.ipv4 : minPrefix.ipv6;
    const most = 1n << BigInt((family === "ipv4" ? 32 : 128) - bound);
    if (!whole && total > most) {
      const inRanges = [...new Set(PARSED.filter((r) => r.family === family && r.counted !== false).flatMap((r) => names(r.span)))];
      out.push({ entries: inRanges, problem: `together admit ${total} private ${family === "ipv4" ? "IPv4" : "IPv6"} addresses, more than one /${bound} (${most})` });
    }
  }
  return out;
}

/** `"a", "b", "c", "d" and 252 more`: entries named, at most four of them. */
export const shownEntries = (entries: readonly string[]): string =>
  `${entries.slice(0, 4).map((e) => JSON.stringify(e)).join(", ")}${entries.length > 4 ? ` and ${entries.length - 4} more` : ""}`;

/** `"a", "b" together cover ...`. */
export const togetherText = ({ entries, problem }: WideTogether): string => `${shownEntries(entries)} ${problem}`;
