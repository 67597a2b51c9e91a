/**
 * decision D34: `health()` says when an agent pool's requests wait and no agent of the
 * pool has been connected to any host for longer than `health.noAgentFor` (5 minutes): until then
 * the run waits silently, and at the deadline the result ends unreachable. One read of the
 * outbox's waiting rows by pool, then one of each such pool's agents.
 */
import type { Storage } from "../storage/types.js";
import { shortDuration } from "../domain/short-duration.js";
import { poolLabel, readPoolPresence } from "./pool-presence.js";

/** Pools judged per check: a bounded read, whatever the number of pools. */
const POOLS_CHECKED = 20;

export async function agentReasons(storage: Storage, now: Date, noAgentForMs: number): Promise<string[]> {
  const waiting = (await storage.taskDeliveries.waitingByPool?.(now.toISOString(), POOLS_CHECKED)) ?? [];
  const reasons: string[] = [];
  for (const backlog of waiting) {
    if (now.getTime() - Date.parse(backlog.oldestDueAt) <= noAgentForMs) continue;
    const presence = await readPoolPresence(storage, backlog.agentPoolId, now);
    if (!presence || presence.connected) continue;
    // Absent since the later of the last report of an agent of the pool and the oldest wait.
    const since = Math.max(Date.parse(backlog.oldestDueAt), presence.lastSeenAt === null ? 0 : Date.parse(presence.lastSeenAt));
    const absent = now.getTime() - since;
    if (absent <= noAgentForMs) continue;
    const count = backlog.due === 1 ? "1 delivery" : `${backlog.due} deliveries`;
    reasons.push(`agent ${poolLabel(presence.pool)} (${presence.pool.id}): ${count} waiting, no agent connected for ${shortDuration(absent)} (longer than ${shortDuration(noAgentForMs)})`);
  }
  return reasons;
}
