import type { HostRecord } from "../schemas/hosts.js";

/**
 * Decision D29a: a host is live while its last beat is at most this many of its own beat
 * intervals old. Three, so one or two beats lost to a slow or briefly unreachable database do not
 * make a host that still seals look gone. Host clocks are assumed to agree to well under an
 * interval (as for leases, D27).
 */
export const LIVE_INTERVALS = 3;

export const isLive = (host: HostRecord, now: Date): boolean =>
  now.getTime() - Date.parse(host.lastSeenAt) <= LIVE_INTERVALS * host.intervalMs;

/** The live hosts that may seal with `keyId`: it is their active key, or about to be. */
export const hostsSealingWith = (hosts: readonly HostRecord[], keyId: string, now: Date): HostRecord[] =>
  hosts.filter((h) => isLive(h, now) && h.sealingKeyIds.includes(keyId));

/** The live hosts whose keyring lacks `keyId`: what is sealed with it they cannot open. */
export const hostsLacking = (hosts: readonly HostRecord[], keyId: string, now: Date): HostRecord[] =>
  hosts.filter((h) => isLive(h, now) && !h.keyIds.includes(keyId));

/** `5 s ago`, `3 min ago`, `2 h ago`, `4 d ago` (never negative: a clock a little ahead reads `0 s ago`). */
export function ago(instant: string, now: Date): string {
  const seconds = Math.max(0, Math.round((now.getTime() - Date.parse(instant)) / 1000));
  if (seconds < 120) return `${seconds} s ago`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}

/** `web-1 pid 4242 (host-abc), last seen 5 s ago`: who a host is, for operators. */
export const describeHost = (host: HostRecord, now: Date): string =>
  `${host.name} pid ${host.pid} (${host.id}), last seen ${ago(host.lastSeenAt, now)}`;

/**
 * One line per host for `doctor`: `web-1 pid 4242 (host-abc): active k2, keys k1, k2, last seen
 * 5 s ago`, plus `, switching to k1` while it makes another key active, or `, silent`
 * for a host that is not live (it stopped without saying so, or cannot reach the database).
 */
export function hostLine(host: HostRecord, now: Date): string {
  const others = host.sealingKeyIds.filter((id) => id !== host.activeKeyId);
  const switching = others.length ? `, switching to ${others.join(", ")}` : "";
  const silent = isLive(host, now) ? "" : ", silent (not live)";
  return `${host.name} pid ${host.pid} (${host.id}): active ${host.activeKeyId}${switching}, keys ${host.keyIds.join(", ")}, last seen ${ago(host.lastSeenAt, now)}${silent}`;
}
