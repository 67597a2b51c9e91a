import type { Principal } from "../schemas/common.js";
import type { ApiTokenRecord } from "../schemas/records.js";
import type { ServiceContext } from "./context.js";
import type { Directory } from "./directory.js";
import { findTokenRecord, principalForToken, sessionDescription, sessionOf, touchTokenRecord } from "./principals.js";

/**
 * Sign-in sessions of the results page (issue 33.3), so its cookie never holds an API token. A
 * session is a new API token record of the signing-in token's principal (no table of its own),
 * described `results page session of <token id> until <end>`: revocable wherever API tokens are,
 * refused by the API's authenticator, and valid only until its end and while the token it was
 * signed in with exists and has the same principal. Its end is kept here, on the server, where the
 * browser cannot move it.
 */
export interface Sessions {
  /**
   * A session of the API token `token`, ending `lifetimeMs` from now; null when `token` is no API
   * token of the default authenticator (a session cannot start another).
   */
  create(token: string, lifetimeMs: number): Promise<{ token: string; expiresAt: string } | null>;
  /** The principal of a session, computed now like an API token's; null when it is no live session (an ended one is deleted). */
  authenticate(sessionToken: string): Promise<Principal | null>;
  /** Deletes a session (sign-out); false when `sessionToken` is none. Never deletes an API token. */
  revoke(sessionToken: string): Promise<boolean>;
}

const samePrincipal = (a: ApiTokenRecord, b: ApiTokenRecord): boolean =>
  a.organization === b.organization && a.kind === b.kind && a.userId === b.userId && a.teamId === b.teamId;

export function createSessions(ctx: ServiceContext, directory: Pick<Directory, "createApiToken">): Sessions {
  async function create(token: string, lifetimeMs: number): Promise<{ token: string; expiresAt: string } | null> {
    if (!Number.isFinite(lifetimeMs) || lifetimeMs <= 0) throw new RangeError("a session lifetime is a positive number of milliseconds");
    const parent = await findTokenRecord(ctx, token);
    if (!parent || sessionOf(parent)) return null;
    const expiresAt = new Date(ctx.now().getTime() + lifetimeMs);
    const description = Number.isNaN(expiresAt.getTime()) ? "" : sessionDescription(parent.id, expiresAt.toISOString());
    // Fail closed: a record not read back as a session would be a plain API token in a cookie.
    if (!sessionOf({ description })) throw new RangeError("a session lifetime must end before the year 10000");
    const session = await directory.createApiToken({
      organization: parent.organization,
      kind: parent.kind,
      ...(parent.userId === null ? {} : { userId: parent.userId }),
      ...(parent.teamId === null ? {} : { teamId: parent.teamId }),
      description,
    });
    return { token: session.token, expiresAt: expiresAt.toISOString() };
  }

  async function authenticate(sessionToken: string): Promise<Principal | null> {
    const record = await findTokenRecord(ctx, sessionToken);
    const session = record && sessionOf(record);
    if (!record || !session) return null;
    // The description is checked against the token it names, so a record described by hand as the
    // session of a stronger token gains nothing: a session acts as its own, identical principal.
    const parent = Date.parse(session.expiresAt) > ctx.now().getTime() ? await ctx.storage.apiTokens.get(session.parentId) : null;
    if (!parent || sessionOf(parent) || !samePrincipal(parent, record)) {
      await ctx.storage.apiTokens.delete(record.id);
      return null;
    }
    await touchTokenRecord(ctx, record);
    return principalForToken(ctx, record);
  }

  async function revoke(sessionToken: string): Promise<boolean> {
    const record = await findTokenRecord(ctx, sessionToken);
    return record !== null && sessionOf(record) !== null && (await ctx.storage.apiTokens.delete(record.id));
  }

  return { create, authenticate, revoke };
}
