import type { Principal } from "../schemas/common.js";
import type { ApiTokenRecord } from "../schemas/records.js";
import { audited } from "./audit.js";
import { actorOfToken, asAuditActor } from "./audit-request.js";
import type { ServiceContext } from "./context.js";
import type { Directory } from "./directory.js";
import { findTokenRecord, isCredential, principalForToken, sessionDescription, sessionOf, touchTokenRecord } from "./principals.js";

/**
 * Sign-in sessions of the results page, so its cookie never holds an API token. A
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

const PAGE = 500;

const samePrincipal = (a: ApiTokenRecord, b: ApiTokenRecord): boolean =>
  a.organization === b.organization && a.kind === b.kind && a.userId === b.userId && a.teamId === b.teamId;

/**
 * Sessions one API token may hold at once: signing in again past it ends the oldest, so signing in
 * in a loop cannot grow storage (an outside review once made 2,500 sign-ins, 2,500 records).
 */
export const MAX_SESSIONS_PER_TOKEN = 5;

export function createSessions(ctx: ServiceContext, directory: Pick<Directory, "createApiToken">): Sessions {
  /** Deletes `parent`'s ended sessions, and its oldest live ones beyond MAX_SESSIONS_PER_TOKEN - 1. */
  async function makeRoom(parent: ApiTokenRecord): Promise<void> {
    const filter = { organization: parent.organization, ...(parent.teamId === null ? {} : { teamId: parent.teamId }) };
    const mine: { id: string; ended: boolean }[] = [];
    const now = ctx.now().getTime();
    // Read whole before deleting: deleting while paging by offset would skip records.
    for (let offset = 0; ; offset += PAGE) {
      const { items } = await ctx.storage.apiTokens.list(filter, { offset, limit: PAGE });
      for (const record of items) {
        const session = sessionOf(record);
        if (session?.parentId === parent.id) mine.push({ id: record.id, ended: Date.parse(session.expiresAt) <= now });
      }
      if (items.length < PAGE) break;
    }
    const live = mine.filter((m) => !m.ended);
    // Listed oldest first: the oldest live ones go.
    const doomed = [...mine.filter((m) => m.ended), ...live.slice(0, Math.max(0, live.length - (MAX_SESSIONS_PER_TOKEN - 1)))];
    for (const { id } of doomed) await ctx.storage.apiTokens.delete(id);
  }

  async function create(token: string, lifetimeMs: number): Promise<{ token: string; expiresAt: string } | null> {
    if (!Number.isFinite(lifetimeMs) || lifetimeMs <= 0) throw new RangeError("a session lifetime is a positive number of milliseconds");
    const parent = await findTokenRecord(ctx, token);
    if (!parent || !isCredential(parent)) return null;
    const expiresAt = new Date(ctx.now().getTime() + lifetimeMs);
    const description = Number.isNaN(expiresAt.getTime()) ? "" : sessionDescription(parent.id, expiresAt.toISOString());
    // Fail closed: a record not read back as a session would be a plain API token in a cookie.
    if (!sessionOf({ description })) throw new RangeError("a session lifetime must end before the year 10000");
    await makeRoom(parent);
    // decision D53: the sign-in is recorded as the token signed in with.
    const session = await asAuditActor(actorOfToken(parent), () => directory.createApiToken({
      organization: parent.organization,
      kind: parent.kind,
      ...(parent.userId === null ? {} : { userId: parent.userId }),
      ...(parent.teamId === null ? {} : { teamId: parent.teamId }),
      description,
    }));
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
    // decision D53: the session acts as the token signed in with, for the audit trail too.
    return principalForToken(ctx, parent);
  }

  async function revoke(sessionToken: string): Promise<boolean> {
    const record = await findTokenRecord(ctx, sessionToken);
    if (record === null || sessionOf(record) === null) return false;
    // decision D53: the sign-out, recorded as the session that ended.
    const draft = { organization: record.organization, resource: { type: "session", id: record.id }, action: "sign-out" };
    return asAuditActor(actorOfToken(record, "session"), () => audited(ctx, draft, () => ctx.storage.apiTokens.delete(record.id)));
  }

  return { create, authenticate, revoke };
}
