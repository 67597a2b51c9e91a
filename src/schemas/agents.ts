import * as z from "zod";

/**
 * Agents of an agent pool (type `agents`, id `agent-`): the processes that connect outbound with an
 * agent token of their pool and carry its run tasks' deliveries (decision D34). HCP Terraform's
 * statuses, as its agent pool page defines them: `idle` waits for work, `busy` is doing some,
 * `unknown` has not reported for too long (and may recover), `errored` is given up on, `exited`
 * stopped and said so.
 */
export const AGENT_STATUSES = ["idle", "busy", "unknown", "errored", "exited"] as const;
export const AgentStatusSchema = z.enum(AGENT_STATUSES);
export type AgentStatus = z.infer<typeof AgentStatusSchema>;

/** Longest agent name kept (a host name, a container name). */
export const AGENT_NAME_MAX = 128;

/** The stored agent. Timestamps are the core's UTC ISO-8601 strings (D9). */
export interface AgentRecord {
  id: string;
  agentPoolId: string;
  /** The agent token that authenticated the agent when it first connected (D22). */
  tokenId: string;
  /** What the agent calls itself; null when it gave no name (HCP shows `null` then). */
  name: string | null;
  status: AgentStatus;
  /** The address the agent connected from. */
  ipAddress: string;
  /** The agent's latest report; set when it first connects. */
  lastPingAt: string;
  createdAt: string;
}

/** What registers an agent (`agents.register`): the agent protocol passes it, tests too. */
export const AgentRegistrationSchema = z.object({
  tokenId: z.string().min(1),
  name: z.string().trim().min(1).max(AGENT_NAME_MAX).nullable().default(null),
  ipAddress: z.string().min(1).max(64),
  status: AgentStatusSchema.default("idle"),
});
export type AgentRegistration = z.input<typeof AgentRegistrationSchema>;

/** An agent as the API shows it: the record and its pool's organization. */
export interface AgentView extends AgentRecord {
  organization: string;
}
