import { conflict } from "../errors.js";
import type { AgentRecord } from "../schemas/agents.js";
import type { AgentPool } from "../schemas/directory.js";
import type { ServiceContext } from "./context.js";
import { isConnected, poolLabel } from "./pool-presence.js";
import { DEFAULT_AGENT_RECORDS } from "./run-task-settings.js";

/**
 * decision D46: agents' records stay bounded. A registration past the cap of agents per token or
 * per pool removes the oldest silent ones (not connected to any host: exited, errored, or no report
 * for 60 s), or is refused 409 when every one is connected; the sweep removes agents silent for
 * longer than the retention.
 */

/** Removable agents: not connected, the oldest report first. */
const silentFirst = (agents: readonly AgentRecord[], now: number): AgentRecord[] =>
  agents.filter((a) => !isConnected(a, now)).sort((x, y) => (x.lastPingAt < y.lastPingAt ? -1 : x.lastPingAt > y.lastPingAt ? 1 : 0));

/** `3 agents connected` */
const agentsConnected = (n: number): string => `${n} agent${n === 1 ? "" : "s"} connected`;

const PRUNE_BATCH = 500;
const MAX_PRUNE_ROUNDS = 20;

export function createAgentRecords(ctx: ServiceContext) {
  const s = ctx.storage;
  const caps = () => ctx.runTasks?.agentRecords ?? DEFAULT_AGENT_RECORDS;

  /** Removes the `excess` oldest silent of `agents`; 409 with `refusal` when there are not that many. */
  async function trim(agents: AgentRecord[], max: number, refusal: string, now: number): Promise<AgentRecord[]> {
    const excess = agents.length - max + 1;
    if (excess <= 0) return [];
    const removable = silentFirst(agents, now).slice(0, excess);
    if (removable.length < excess) throw conflict(refusal);
    for (const a of removable) await s.agents.delete(a.id);
    return removable;
  }

  return {
    /** Room for one more agent of `tokenId` in `pool`, within both caps. */
    async makeRoom(pool: AgentPool, tokenId: string): Promise<void> {
      const { maxPerToken, maxPerPool } = caps();
      // The pool's list is bounded by its cap (at most 100), so one page holds it.
      const all = (await s.agents.listByPool(pool.id, {}, { offset: 0, limit: 1_000 })).items;
      const now = ctx.now().getTime();
      const ofToken = all.filter((a) => a.tokenId === tokenId);
      const gone = await trim(ofToken, maxPerToken, `this agent token has ${agentsConnected(maxPerToken)}, the most allowed (agentRecords.maxPerToken): stop one, or use another token of the pool`, now);
      const left = all.filter((a) => !gone.includes(a));
      await trim(left, maxPerPool, `agent ${poolLabel(pool)} has ${agentsConnected(maxPerPool)}, the most allowed (agentRecords.maxPerPool): stop one, or delete a stopped one`, now);
    },

    /** Removes the agents silent for longer than `agentRecords.retention`; resolves how many. */
    async prune(): Promise<number> {
      const before = new Date(ctx.now().getTime() - caps().retentionMs).toISOString();
      let removed = 0;
      for (let round = 0; round < MAX_PRUNE_ROUNDS; round++) {
        const n = await s.agents.prune(before, PRUNE_BATCH);
        removed += n;
        if (n < PRUNE_BATCH) break;
      }
      return removed;
    },
  };
}
