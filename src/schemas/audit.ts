import * as z from "zod";

/**
 * decision D53: the audit trail's records. An event names who acted (a credential, never its
 * secret), where (organization, resource), what (action, changed fields), and from where (request
 * id, client address). The core builds and bounds it; an adapter stores it and adds only the chain
 * fields (`seq`, `prev`, `digest`).
 */
export const AUDIT_ACTOR_KINDS = ["token", "session", "system", "host"] as const;
export const AUDIT_TOKEN_KINDS = ["organization", "team", "user", "admin", "agent", "session"] as const;

export const AuditActorSchema = z.object({
  /**
   * `token`: an API or agent credential; `session`: a results-page sign-in; `system`: the library
   * itself; `host`: whoever the host named with `runplane.audit.as` (its own user or service).
   */
  kind: z.enum(AUDIT_ACTOR_KINDS),
  /** The credential's id (`at-...`, `admin`), never its secret; null for `system`. */
  tokenId: z.string().nullable(),
  tokenKind: z.enum(AUDIT_TOKEN_KINDS).nullable(),
  /** The user or team behind the credential, when it has one. */
  userId: z.string().nullable(),
  teamId: z.string().nullable(),
  /** A short readable name ("team owners", "user user-...", "ADMIN_TOKEN", "runplane"). */
  description: z.string(),
});
export type AuditActor = z.infer<typeof AuditActorSchema>;

/** One changed field: its old and new values, or only `"value changed"` for a sensitive one. */
export const AuditChangeSchema = z.object({
  field: z.string(),
  old: z.unknown().optional(),
  new: z.unknown().optional(),
  /** Present (and `old`/`new` absent) when the value is a secret: the trail says only that it changed. */
  note: z.literal("value changed").optional(),
});
export type AuditChange = z.infer<typeof AuditChangeSchema>;

export const AuditEventSchema = z.object({
  /** A UUID (HCP Terraform's audit trail ids are UUIDs). */
  id: z.string(),
  organization: z.string(),
  /** Milliseconds since the epoch. The chain keeps them non-decreasing per organization (D53). */
  at: z.number().int(),
  actor: AuditActorSchema,
  request: z.object({ id: z.string().nullable(), clientAddress: z.string().nullable() }),
  resource: z.object({ type: z.string(), id: z.string() }),
  action: z.string(),
  changes: z.array(AuditChangeSchema),
});
export type AuditEvent = z.infer<typeof AuditEventSchema>;

/** A stored event: its place in its organization's chain and the digests linking it (D53). */
export interface AuditEntry extends AuditEvent {
  /** 1, 2, 3, ... per organization, in the order the events were committed. */
  seq: number;
  /** The digest of the organization's previous event (64 zeros before the first). */
  prev: string;
  /** SHA-256 hex of this event's canonical JSON, `prev` and `seq` included. */
  digest: string;
}

/** An entry as the audit store's `scan` reads it: the body's fields and, in a SQL adapter, the row's own columns. */
export interface ScannedAuditEntry extends AuditEntry {
  stored?: { seq: number; id: string; at: number };
  /** The stored body is no event's JSON: only `seq`, `digest` and `stored` are set. */
  unreadable?: true;
}
