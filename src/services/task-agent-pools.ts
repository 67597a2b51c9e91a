import { invalid, quote } from "../errors.js";
import type { AgentPool } from "../schemas/directory.js";
import { NO_AGENT_SESSIONS } from "./agent-sessions.js";
import type { ServiceContext } from "./context.js";
import type { TaskEndpoint, TaskEndpointCheck } from "./task-endpoint.js";

/** Where a run task's agent pool is in a JSON:API body (HCP Terraform's `agent-pool` relationship). */
export const AGENT_POOL_POINTER = "/data/relationships/agent-pool";

/**
 * decision D34: the agent pool a run task names. `undefined` keeps what the task had, null makes
 * it a task the platform delivers itself, a string names a pool.
 */
export type AgentPoolChoice = string | null | undefined;

/** The pool of a run task: which one it may name, and how its endpoint is verified. */
export function createTaskAgentPools(ctx: ServiceContext, checkEndpoint: TaskEndpointCheck) {
  const sessions = () => ctx.agentSessions ?? NO_AGENT_SESSIONS;

  /**
   * The pool `id` of `organization`. An unknown id and another organization's pool get the same
   * 422 (decision D5a: no answer tells whether another organization's pool exists).
   */
  async function resolve(organization: string, id: string): Promise<AgentPool> {
    const pool = await ctx.storage.agentPools.get(id);
    if (!pool || pool.organization !== organization) {
      throw invalid(AGENT_POOL_POINTER, `Agent pool ${quote(id)} was not found in organization ${quote(organization)}`);
    }
    return pool;
  }

  return {
    resolve,
    /** The pool a write leaves the task with: `chosen` when given (null for none), else `current`'s. */
    async after(organization: string, current: string | null, chosen: AgentPoolChoice): Promise<AgentPool | null> {
      const id = chosen === undefined ? current : chosen;
      return id === null ? null : resolve(organization, id);
    },
    /**
     * decision D15 and D34: the verification request goes out directly for a task without a pool;
     * for a pool's task only through a connected agent of that pool, 422 when none is connected.
     */
    async verify(pool: AgentPool | null, endpoint: TaskEndpoint, pointer: string): Promise<void> {
      if (pool === null) return checkEndpoint(endpoint, pointer);
      const agents = sessions();
      // decision D34: an agent of the pool connected to any host will do (through the storage's relay).
      if (!agents.connected(pool.id) && !(await agents.connectedElsewhere?.(pool.id))) {
        throw invalid(AGENT_POOL_POINTER, `no agent of pool ${quote(pool.name)} (${pool.id}) is connected`);
      }
      await agents.checkEndpoint(pool.id, endpoint, pointer, pool.name);
    },
  };
}
export type TaskAgentPools = ReturnType<typeof createTaskAgentPools>;
