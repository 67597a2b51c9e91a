import * as z from "zod";
import { OrgPermissionSchema } from "./common.js";

/**
 * Host-side records the API refers to but does not manage over HTTP. Hosts with their own tables
 * keep these in sync through `runplane.directory`.
 */
export const OrganizationSchema = z.object({
  name: z.string().min(1).max(128),
  email: z.string().nullable().default(null),
});
export type Organization = z.infer<typeof OrganizationSchema>;

export const ProjectSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  organization: z.string().min(1),
});
export type Project = z.infer<typeof ProjectSchema>;

export const WorkspaceSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  organization: z.string().min(1),
  projectId: z.string().min(1),
  workingDirectory: z.string().default(""),
  vcsRepoUrl: z.string().nullable().default(null),
  vcsBranch: z.string().nullable().default(null),
});
export type Workspace = z.infer<typeof WorkspaceSchema>;

export const TEAM_VISIBILITIES = ["secret", "organization"] as const;

export const TeamSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  organization: z.string().min(1),
  visibility: z.enum(TEAM_VISIBILITIES).default("secret"),
  orgPermissions: z.array(OrgPermissionSchema).default([]),
  /** User ids. */
  members: z.array(z.string()).default([]),
  /**
   * decision D41: this is the organization's owners team (every permission in it, D21). A
   * property, never the name: a team named "owners" without it is an ordinary team.
   */
  owners: z.boolean().default(false),
});
export type Team = z.infer<typeof TeamSchema>;

export const UserSchema = z.object({
  id: z.string().min(1),
  username: z.string().min(1),
  email: z.string().nullable().default(null),
});
export type User = z.infer<typeof UserSchema>;

export const POLICY_KINDS = ["sentinel", "opa"] as const;
export const PolicySetSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  organization: z.string().min(1),
  kind: z.enum(POLICY_KINDS).default("sentinel"),
});
export type PolicySet = z.infer<typeof PolicySetSchema>;

export const AgentPoolSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  organization: z.string().min(1),
});
export type AgentPool = z.infer<typeof AgentPoolSchema>;

/** The name runplane's own setups give the owners team (the reference server, the examples); owners-ness is `Team.owners` (D41). */
export const OWNERS_TEAM_NAME = "owners";
