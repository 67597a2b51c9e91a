import { hostLine, isLive } from "../../src/domain/hosts.js";
import type { HostRecord } from "../../src/schemas/hosts.js";
import { inspectDatabase } from "./check-storage.js";
import type { CheckInput, Verdict } from "./check-types.js";

/** Under `ok   hosts: `, so each host's line starts below the note's first word. */
const INDENT = "       ";

/**
 * Decision D29a: the hosts that recorded themselves in the database, one line each with the key
 * it seals with (`doctor`). Never fails: a silent host is shown, not an error; it only stops
 * blocking `reencrypt --retire` once it is not live.
 */
export async function hostsCheck({ config, problems }: CheckInput): Promise<Verdict> {
  if (problems.some((p) => p.variable === "DATABASE_URL" || p.variable === "DATABASE_SCHEMA")) return { skip: "not checked: the database settings are not valid (see options)" };
  const hosts = await inspectDatabase(config, async (db) => {
    const storage = await db.storage();
    return storage ? storage.hosts.list() : null;
  });
  if (hosts === null) return { note: "none recorded yet (the database is new, or its migrations are pending)" };
  return { note: hostsNote(hosts, new Date()) };
}

/** `2 live, 1 silent` and one line per host, live ones first, each group by name then pid. */
export function hostsNote(hosts: readonly HostRecord[], now: Date): string {
  if (hosts.length === 0) return "none running (no host has recorded itself in the database)";
  const live = hosts.filter((h) => isLive(h, now));
  const silent = hosts.length - live.length;
  const order = (a: HostRecord, b: HostRecord): number => Number(isLive(b, now)) - Number(isLive(a, now)) || a.name.localeCompare(b.name) || a.pid - b.pid;
  const summary = `${live.length} live${silent ? `, ${silent} silent (stopped without removing their record, or cannot reach the database)` : ""}`;
  return [summary, ...[...hosts].sort(order).map((h) => `${INDENT}${hostLine(h, now)}`)].join("\n");
}

/** How many hosts are live on this storage now (this one included); 0 when the list cannot be read. */
export async function liveHosts(storage: { hosts: { list(): Promise<HostRecord[]> } }): Promise<number> {
  const now = new Date();
  return (await storage.hosts.list().catch(() => [])).filter((h) => isLive(h, now)).length;
}

/**
 * The start banner's word on PUBLIC_URL when hosts share a database without it (D27): callbacks
 * name the host that sent the request and die with it. "Several hosts" only when another is live.
 */
export const publicUrlNote = (live: number): string =>
  live > 1
    ? `several hosts on this database (${live} live by their heartbeats): set PUBLIC_URL to your load balancer, so integrations call back to whichever host is up (callbacks now name this host)`
    : "PUBLIC_URL is not set: callbacks name this host; set it to your load balancer before another host shares this database";
