import * as z from "zod";

/** Organization-level team permissions that matter to the routes in scope (D19, D21). */
export const ORG_PERMISSIONS = [
  "manage-projects",
  "manage-workspaces",
  "manage-policies",
  "manage-policy-overrides",
  "manage-agent-pools",
  "manage-run-tasks",
] as const;
export const OrgPermissionSchema = z.enum(ORG_PERMISSIONS);
export type OrgPermission = z.infer<typeof OrgPermissionSchema>;

export const PRINCIPAL_KINDS = ["user", "team", "organization"] as const;

/** Who is calling. Built by `authenticate` (the host's or the default token authenticator). */
export const PrincipalSchema = z.object({
  organization: z.string().min(1),
  kind: z.enum(PRINCIPAL_KINDS),
  userId: z.string().optional(),
  teamIds: z.array(z.string()).readonly(),
  isOwner: z.boolean(),
  orgPermissions: z.array(OrgPermissionSchema).readonly(),
  /** decision D53: the credential's id (never its secret), for the audit trail; absent for a host's own principal. */
  tokenId: z.string().optional(),
  /** decision D53: `admin` for the reference server's ADMIN_TOKEN, else the principal's kind. */
  tokenKind: z.enum(["organization", "team", "user", "admin"]).optional(),
  /** decision D53: a short name of the credential for the trail (its description, bounded). */
  tokenDescription: z.string().optional(),
});
export type Principal = z.infer<typeof PrincipalSchema>;

/** Variable categories as stored. `config` is written as `terraform` in the hcp-terraform dialect (D1). */
export const VARIABLE_CATEGORIES = ["config", "env"] as const;
export const VAR_CATEGORIES = ["config", "env", "policy-set"] as const;
export type VarCategory = (typeof VAR_CATEGORIES)[number];

export const DIALECTS = ["default", "hcp-terraform"] as const;
export type Dialect = (typeof DIALECTS)[number];

/** UTC ISO-8601 with milliseconds and a literal `Z` (D9; go-tfe cannot parse offsets here). */
export type IsoTimestamp = string;
