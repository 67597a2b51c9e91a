import * as z from "zod";
import { AGENT_TOKEN_CREATOR_TYPES, type AgentTokenCreatorType } from "./records.js";

/** decision D22 limits; the real API documents none, so the description gets the API-token bound. */
export const AGENT_TOKEN_LIMITS = { description: 256 } as const;

/** `sort` values of the list (ties broken by id in the same direction). */
export const AGENT_TOKEN_SORTS = ["created-at", "-created-at"] as const;
export type AgentTokenSort = (typeof AGENT_TOKEN_SORTS)[number];

/** The attributes of a create body (decision D22): a non-blank description. */
export const AgentTokenCreateSchema = z.object({
  description: z
    .string()
    .max(AGENT_TOKEN_LIMITS.description)
    .refine((d) => d.trim() !== "", { message: "can't be blank" }),
});
export type AgentTokenCreate = z.input<typeof AgentTokenCreateSchema>;

/** The `created-by` relationship: a user, a team, or the organization (by name). */
export const AgentTokenCreatorSchema = z.object({
  type: z.enum(AGENT_TOKEN_CREATOR_TYPES),
  id: z.string().min(1),
});
export interface AgentTokenCreator {
  type: AgentTokenCreatorType;
  id: string;
}

/** An agent token as the API shows it: metadata only, `token` set in the create result alone. */
export interface AgentTokenView {
  id: string;
  agentPoolId: string;
  organization: string;
  description: string;
  createdAt: string;
  lastUsedAt: string | null;
  createdBy: AgentTokenCreator;
  /** The secret token string: only in the result of `create`, `null` everywhere else. */
  token: string | null;
  /** Tokens do not expire (the real API's attribute, always null here). */
  expiredAt: null;
}

/** What `verify` resolves for a valid token. */
export interface VerifiedAgentToken {
  tokenId: string;
  agentPoolId: string;
}
