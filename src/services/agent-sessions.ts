import { ApiError } from "../errors.js";
import type { TaskEndpoint } from "./task-endpoint.js";

/**
 * The agents connected to this runplane right now, by pool (decision D34). A run task that names an
 * agent pool is reached only through an agent of that pool: the platform never sends its requests
 * itself, the verification request included. The agent protocol implements this; until it is wired
 * in, no pool has a connected agent (`NO_AGENT_SESSIONS`).
 */
export interface AgentSessions {
  /** Whether at least one agent of `poolId` holds a live session now. */
  connected(poolId: string): boolean;
  /** With several hosts: whether an agent of `poolId` is connected to another host (its stored reports). */
  connectedElsewhere?(poolId: string): Promise<boolean>;
  /**
   * Sends the verification request of `endpoint` (decision D15) through a connected agent of
   * `poolId`. Resolves when the integration answered 200; throws a 422 ApiError at `pointer`
   * otherwise, as `TaskEndpointCheck` does.
   */
  checkEndpoint(poolId: string, endpoint: TaskEndpoint, pointer: string, poolName?: string): Promise<void>;
}

/** No session anywhere: every pool is without a connected agent. */
export const NO_AGENT_SESSIONS: AgentSessions = {
  connected: () => false,
  // Unreachable: callers ask `connected` first, and it is always false here.
  checkEndpoint: async () => {
    throw new ApiError("internal");
  },
};
