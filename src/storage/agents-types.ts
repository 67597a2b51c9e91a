import type { AgentRecord, AgentStatus } from "../schemas/agents.js";
import type { Page, PageRequest } from "../schemas/records.js";

/** Which agents of a pool `AgentStore.listByPool` returns. */
export interface AgentListFilter {
  /** Only agents whose `lastPingAt` is at or after this instant (the core's UTC ISO-8601 string). */
  lastPingSince?: string;
}

/**
 * The agents of agent pools (decision D34). Only the agent protocol creates and updates them; the
 * API reads them. Timestamps are the core's fixed-width UTC ISO-8601 strings, so comparing them as
 * strings compares instants.
 */
export interface AgentStore {
  /** Inserts; `false` (and no change) when the id is taken, checked atomically. */
  insert(record: AgentRecord): Promise<boolean>;
  get(id: string): Promise<AgentRecord | null>;
  /**
   * One page of the agents of `agentPoolId` that pass `filter`, ordered by `createdAt`, then `id`,
   * and how many pass it (`total`, whatever the page).
   */
  listByPool(agentPoolId: string, filter: AgentListFilter, page: PageRequest): Promise<Page<AgentRecord>>;
  /**
   * Records an agent's report in one atomic step: when `at` is not before the stored `lastPingAt`,
   * sets `lastPingAt` to `at` and `status` to `status`; an older report changes nothing, so racing
   * reports keep the latest. Nothing else changes. Resolves the stored agent after the step, or null
   * when there is none (a report never recreates an agent).
   */
  ping(id: string, at: string, status: AgentStatus): Promise<AgentRecord | null>;
  /**
   * Compare-and-set of the status alone: sets `status` only while the stored status is one of
   * `expected`. Resolves the stored agent, or null (nothing written) when the agent does not exist
   * or its status is not one of `expected`.
   */
  setStatus(id: string, expected: readonly AgentStatus[], status: AgentStatus): Promise<AgentRecord | null>;
  /**
   * decision D46: removes the agent; `false` when there was none. Its attempts keep naming its id.
   */
  delete(id: string): Promise<boolean>;
  /**
   * decision D46: removes up to `limit` agents (of any pool) whose `lastPingAt` is before `before`,
   * oldest report first, and resolves how many it removed (the sweep calls it until fewer than
   * `limit` go).
   */
  prune(before: string, limit: number): Promise<number>;
}
