import type { AgentJob, JobResult } from "../schemas/agent-protocol.js";

/** The shapes of the agent hub (decision D34): its sessions, polls, jobs and their ends. */

/** An agent that has polled this host. */
export interface AgentSession {
  agentId: string;
  /** What the agent calls itself (its `--name`), when known: its lost jobs' attempts name it (D45). */
  name?: string | null;
  agentPoolId: string;
  tokenId: string;
  /** Real time (ms) of its latest request. */
  lastSeen: number;
  waiting: Set<Waiter>;
  jobs: Set<string>;
  /** The status last written to the agent's record, and when (real time, ms). */
  written?: { status: string; at: number };
}

/** How a poll ended: a job, or why none. */
export type PollEnd = { job: AgentJob } | { job: null; reason: "timeout" | "revoked" | "ended" };

export interface Waiter {
  session: AgentSession;
  settle(end: PollEnd): void;
  /** The poll's request was abandoned by the client (when the server says so). */
  gone(): boolean;
  /** decision D58: taken for a job whose record is being written: its wait running out no longer ends it. */
  held?: boolean;
}

/** The agent a job is handed to (decision D58: named by its record). */
export interface JobAgent {
  id: string;
  name: string | null;
}

/** A built, signed request to hand to an agent. */
export interface JobRequest {
  url: string;
  headers: Record<string, string>;
  body: Uint8Array | string;
  /** The attempt's budget, which the agent's egress enforces. */
  timeoutMs: number;
  /** How much longer than `timeoutMs` the host waits for the report before giving the row back. */
  marginMs: number;
  /**
   * decision D58: called with the agent chosen, before it gets the job (its attempt's record is
   * written then); the job is handed out once it resolves. When it rejects, the agent's poll ends
   * without a job and the dispatch rejects with its error.
   */
  handing?: (agent: JobAgent) => Promise<void>;
}

/**
 * A job's end: the agent's report, or `no-agent` (none waiting) / `lost` (no report in time, or the
 * session ended; decision D45: the agent that held it, whose attempt it was).
 */
export type JobOutcome =
  | { ok: true; agentId: string; result: JobResult }
  | { ok: false; reason: "no-agent" }
  | { ok: false; reason: "lost"; agent: JobAgent };

