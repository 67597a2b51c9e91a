import { ORG_PERMISSIONS, type OrgPermission, type Principal } from "../schemas/common.js";
import type { Team } from "../schemas/directory.js";
import type { ApiTokenRecord } from "../schemas/records.js";
import { isoNow, type ServiceContext } from "./context.js";
import { sha256Hex, safeEqual } from "../crypto/random.js";
import { cutText } from "../errors.js";

/** `last-used-at` is written at most this often per token: a write per request would dominate reads. */
export const TOUCH_INTERVAL_MS = 60_000;

/** The secret of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match ? match[1]! : null;
}

const union = (teams: readonly Team[]): OrgPermission[] => [...new Set(teams.flatMap((t) => t.orgPermissions))];

/**
 * The principal an API token acts as, computed from the directory at request time so membership
 * changes apply at once. Organization tokens and owners-team tokens act as owners (D21).
 */
export async function principalForToken(ctx: ServiceContext, record: ApiTokenRecord): Promise<Principal | null> {
  const principal = await principalOfRecord(ctx, record);
  return principal && { ...principal, ...tokenIdentity(record) };
}

/** The owners token the reference server keeps for its `ADMIN_TOKEN` is marked by this description. */
const ADMIN_TOKEN_DESCRIPTION = "ADMIN_TOKEN";

/** decision D53: what the audit trail says of the credential: its id and kind, never its secret. */
function tokenIdentity(record: ApiTokenRecord): Pick<Principal, "tokenId" | "tokenKind" | "tokenDescription"> {
  const admin = record.description === ADMIN_TOKEN_DESCRIPTION;
  return { tokenId: record.id, tokenKind: admin ? "admin" : record.kind, tokenDescription: cutText(record.description || `${record.kind} token`, 128) };
}

async function principalOfRecord(ctx: ServiceContext, record: ApiTokenRecord): Promise<Principal | null> {
  const base = { organization: record.organization, userId: undefined };
  switch (record.kind) {
    case "organization":
      return { ...base, kind: "organization", teamIds: [], isOwner: true, orgPermissions: [...ORG_PERMISSIONS] };
    case "team": {
      const team = record.teamId ? await ctx.storage.teams.get(record.teamId) : null;
      if (!team || team.organization !== record.organization) return null;
      return { ...base, kind: "team", teamIds: [team.id], isOwner: team.owners, orgPermissions: union([team]) };
    }
    case "user": {
      if (!record.userId || !(await ctx.storage.users.get(record.userId))) return null;
      const teams = await ctx.storage.teams.listByMember(record.organization, record.userId);
      return {
        organization: record.organization,
        kind: "user",
        userId: record.userId,
        teamIds: teams.map((t) => t.id),
        isOwner: teams.some((t) => t.owners),
        orgPermissions: union(teams),
      };
    }
  }
}

/** The stored record of the API token whose secret is `token`, or null. */
export async function findTokenRecord(ctx: ServiceContext, token: string): Promise<ApiTokenRecord | null> {
  const digest = sha256Hex(token);
  const record = await ctx.storage.apiTokens.findByDigest(digest);
  // The lookup is by digest; the constant-time compare guards an adapter that matches loosely.
  return record && safeEqual(record.digest, digest) ? record : null;
}

/** Writes `last-used-at`, at most once per {@link TOUCH_INTERVAL_MS}. */
export async function touchTokenRecord(ctx: ServiceContext, record: ApiTokenRecord): Promise<void> {
  if (!record.lastUsedAt || ctx.now().getTime() - Date.parse(record.lastUsedAt) >= TOUCH_INTERVAL_MS) {
    await ctx.storage.apiTokens.touch(record.id, isoNow(ctx));
  }
}

// A results page session is an API token record (no table of its own) marked by its
// description, which names the token signed in with and the session's end (src/services/sessions.ts).
const SESSION_DESCRIPTION = /^results page session of (\S+) until (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)$/;

export const sessionDescription = (parentId: string, expiresAt: string): string => `results page session of ${parentId} until ${expiresAt}`;

/** The token a session was signed in with and its end, or null when the record is no session. */
export function sessionOf(record: Pick<ApiTokenRecord, "description">): { parentId: string; expiresAt: string } | null {
  const match = SESSION_DESCRIPTION.exec(record.description);
  return match ? { parentId: match[1]!, expiresAt: match[2]! } : null;
}

/**
 * The description of a record that remembers a revoked token (the reference server's ADMIN_TOKEN)
 * so that no start brings it back. Its digest is derived from the revoked token's, and
 * it is never a credential.
 */
export const REVOKED_TOKEN_DESCRIPTION = "revoked token (a record that is never a credential)";

/** Whether a record may authenticate: not a results page session, nor a revoked token's record. */
export const isCredential = (record: Pick<ApiTokenRecord, "description">): boolean =>
  sessionOf(record) === null && record.description !== REVOKED_TOKEN_DESCRIPTION;

/**
 * The default authenticator: `Authorization: Bearer <token>` against stored SHA-256 digests (D11).
 * A results page session is refused: it lives in a browser cookie and only the page
 * accepts it, so a leaked cookie is never an API credential; so is a revoked token's record.
 */
export function createTokenAuthenticator(ctx: ServiceContext) {
  return async (request: Request): Promise<Principal | null> => {
    const token = bearerToken(request);
    if (token === null) return null;
    const record = await findTokenRecord(ctx, token);
    if (!record || !isCredential(record)) return null;
    await touchTokenRecord(ctx, record);
    return principalForToken(ctx, record);
  };
}
