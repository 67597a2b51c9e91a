import type { AgentRecord } from "../schemas/agents.js";
import type { AgentPool } from "../schemas/directory.js";
import type { TaskResultView } from "../schemas/task-stage-views.js";
import type { Storage } from "../storage/types.js";
import { AGENT_SILENT_MS } from "./agent-hub.js";

/**
 * decision D34: whether an agent pool has an agent connected to ANY host, read from the
 * agents' stored reports (each host writes its agents' reports at least every 15 s while they
 * poll), and since when none has been. What the result API, the results page, `/demo/runs`,
 * `/healthz` and `doctor` say of a pool result that waits: never "the integration", when no agent
 * of its pool was there to send the request.
 */

/** Agents read per pool: the pool's list is bounded (a cap per pool), so this is all of them. */
export const PRESENCE_PAGE = 100;

export interface PoolPresence {
  pool: AgentPool;
  /** The pool's agents (at most {@link PRESENCE_PAGE}), oldest first. */
  agents: AgentRecord[];
  /** An agent of the pool is idle or busy and reported within the last 60 s, on any host. */
  connected: boolean;
  /** The newest report of any agent of the pool: since then none has been connected. Null: no agent record (none registered, or all deleted). */
  lastSeenAt: string | null;
}

/** Whether `agent` counts as connected at `now` (ms): running, and reported within AGENT_SILENT_MS. */
export const isConnected = (agent: AgentRecord, now: number): boolean =>
  (agent.status === "idle" || agent.status === "busy") && now - Date.parse(agent.lastPingAt) <= AGENT_SILENT_MS;

/** The presence of pool `poolId` at `now`; null when the pool is gone. */
export async function readPoolPresence(storage: Storage, poolId: string, now: Date): Promise<PoolPresence | null> {
  const pool = await storage.agentPools.get(poolId);
  if (!pool) return null;
  const { items } = await storage.agents.listByPool(poolId, {}, { offset: 0, limit: PRESENCE_PAGE });
  const at = now.getTime();
  const lastSeenAt = items.reduce<string | null>((newest, a) => (newest === null || a.lastPingAt > newest ? a.lastPingAt : newest), null);
  return { pool, agents: items, connected: items.some((a) => isConnected(a, at)), lastSeenAt };
}

/** `pool "inside"`: how every sentence names a pool. */
export const poolLabel = (pool: Pick<AgentPool, "name">): string => `pool "${pool.name}"`;

/**
 * Why nothing was sent: `no agent connected since 2026-11-28T22:40:01.000Z`, or `no agent of it is
 * connected` when no agent record is left: a deleted agent's record is gone (D46), so the pool's
 * history is not known and "ever" would be untrue (found from outside).
 */
export const absenceText = (presence: Pick<PoolPresence, "lastSeenAt">): string =>
  presence.lastSeenAt === null ? "no agent of it is connected" : `no agent connected since ${presence.lastSeenAt}`;

/** `waiting for an agent of pool "inside": no agent connected since ...` */
export const waitingText = (presence: PoolPresence): string => `waiting for an agent of ${poolLabel(presence.pool)}: ${absenceText(presence)}`;

/** What a result's deadline says when no agent of its pool took the request (the result ends `unreachable`, D16). */
export const noAgentMessage = (presence: PoolPresence | null, poolId: string): string =>
  `No agent of ${presence ? poolLabel(presence.pool) : `pool ${poolId}`} took the request before the deadline (${presence ? absenceText(presence) : "the pool is gone"}); the integration was never sent it.`;

/** A result's message starts so when it ended because no agent of its pool took the request. */
export const NO_AGENT_PREFIX = "No agent of pool ";

/** What a pool result says of its pool and agent (the result API's attributes, the results page). */
export interface ResultAgentFacts {
  poolId: string;
  poolName: string | null;
  /** The agent that carried the newest attempt (and its `--name`); null while none has. */
  agentId: string | null;
  agentName: string | null;
  /** Whether an agent of the pool is connected to any host now. */
  connected: boolean;
  lastSeenAt: string | null;
  /** While the result is `pending` and no agent of its pool is connected: why nothing is sent. */
  waiting: string | null;
}

/** The agent facts of `result` (null for a result the platform delivers itself). */
export async function readAgentFacts(
  storage: Storage,
  result: Pick<TaskResultView, "id" | "status" | "agentPoolId">,
  now: Date,
): Promise<ResultAgentFacts | null> {
  if (!result.agentPoolId) return null;
  const presence = await readPoolPresence(storage, result.agentPoolId, now);
  const [newest] = (await storage.deliveryAttempts.list(result.id, { offset: 0, limit: 5 })).items.filter((a) => a.agentId);
  const agent = newest?.agentId ? await storage.agents.get(newest.agentId) : null;
  const connected = presence?.connected ?? false;
  return {
    poolId: result.agentPoolId,
    poolName: presence?.pool.name ?? null,
    agentId: newest?.agentId ?? null,
    agentName: agent?.name ?? null,
    connected,
    lastSeenAt: presence?.lastSeenAt ?? null,
    waiting: result.status === "pending" && presence && !connected ? waitingText(presence) : null,
  };
}

/** The `--name` of each of `ids` that has one (at most 20 distinct: an attempts page's agents). */
export async function readAgentNames(storage: Storage, ids: readonly string[]): Promise<Record<string, string>> {
  const names: Record<string, string> = {};
  for (const id of [...new Set(ids)].slice(0, 20)) {
    const name = (await storage.agents.get(id))?.name;
    if (name) names[id] = name;
  }
  return names;
}
