import type { OrgPermission, VarCategory } from "./common.js";

/**
 * Stored shapes. These are what a Storage adapter persists; adapters never see plaintext for a
 * sensitive value (it arrives sealed by the core, decision D11) and never a bearer secret (only its
 * SHA-256 digest).
 */
export const VAR_OWNER_KINDS = ["workspace", "policy-set"] as const;
export type VarOwnerKind = (typeof VAR_OWNER_KINDS)[number];

export interface VarOwner {
  kind: VarOwnerKind;
  id: string;
}

export interface VariableRecord {
  id: string;
  ownerKind: VarOwnerKind;
  ownerId: string;
  key: string;
  /** Plaintext when `sensitive` is false; the keyring's sealed string when true. */
  value: string;
  description: string | null;
  category: VarCategory;
  hcl: boolean;
  sensitive: boolean;
  versionId: string;
  createdAt: string;
  updatedAt: string;
}

export const API_TOKEN_KINDS = ["user", "team", "organization"] as const;
export type ApiTokenKind = (typeof API_TOKEN_KINDS)[number];

export interface ApiTokenRecord {
  id: string;
  /** SHA-256 hex of the secret; the secret itself is never stored. */
  digest: string;
  organization: string;
  kind: ApiTokenKind;
  userId: string | null;
  teamId: string | null;
  description: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** Who created an agent token: the wire type of the `created-by` relationship (decision D22). */
export const AGENT_TOKEN_CREATOR_TYPES = ["users", "teams", "organizations"] as const;
export type AgentTokenCreatorType = (typeof AGENT_TOKEN_CREATOR_TYPES)[number];

/** An agent pool authentication token (spec 2.7, decision D22). */
export interface AgentTokenRecord {
  id: string;
  agentPoolId: string;
  /** The pool's organization when the token was created. */
  organization: string;
  description: string;
  /** SHA-256 hex of the whole token string; the token itself is never stored (D11). */
  digest: string;
  createdAt: string;
  lastUsedAt: string | null;
  createdByType: AgentTokenCreatorType;
  /** A user id, a team id, or the organization's name. */
  createdById: string;
}

export interface PageRequest {
  offset: number;
  limit: number;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export type { OrgPermission };
export type * from "./run-task-records.js";
