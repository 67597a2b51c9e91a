import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { cutText } from "../errors.js";
import type { AuditActor } from "../schemas/audit.js";
import type { Principal } from "../schemas/common.js";
import type { ApiTokenRecord } from "../schemas/records.js";

/**
 * decision D53: who is asking and from where, for the events the request's writes record. The HTTP
 * handler opens the scope for every request and names the actor once the credential is known;
 * writes outside any request (the host's own code, the sweeper) are the `system` actor.
 */
export interface AuditRequest {
  requestId: string | null;
  clientAddress: string | null;
  actor: AuditActor | null;
  /** The authenticated principal's organization: every object it may write belongs to it (D5a). */
  organization?: string;
}

const requests = new AsyncLocalStorage<AuditRequest>();

export const SYSTEM_ACTOR: AuditActor = { kind: "system", tokenId: null, tokenKind: null, userId: null, teamId: null, description: "runplane" };

/** A request id a client may choose (bounded, plain characters), else a fresh UUID. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdOf(request: Request): string {
  const given = request.headers.get("x-request-id")?.trim();
  return given && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Runs `fn` (one HTTP request from `clientAddress`, decision D62) with its audit scope open. */
export function inAuditRequest<R>(request: Request, clientAddress: string | null, fn: () => R): R {
  return requests.run({ requestId: requestIdOf(request), clientAddress, actor: null }, fn);
}

/** Names the current request's actor (the handler calls it once the credential is authenticated). */
export function noteAuditActor(actor: AuditActor, organization?: string): void {
  const current = requests.getStore();
  if (!current) return;
  current.actor = actor;
  if (organization !== undefined) current.organization = organization;
}

export function currentAuditRequest(): AuditRequest | undefined {
  return requests.getStore();
}

/** Runs `fn` as `actor` (a results-page session, an agent): its writes are recorded under it. */
export function asAuditActor<R>(actor: AuditActor, fn: () => R): R {
  const current = requests.getStore();
  return requests.run({ requestId: current?.requestId ?? null, clientAddress: current?.clientAddress ?? null, actor }, fn);
}

/** The actor behind a principal: its credential's id and kind, and the user or team behind it. */
export function actorOfPrincipal(principal: Principal): AuditActor {
  const tokenId = principal.tokenId ?? null;
  const teamId = principal.kind === "team" ? (principal.teamIds[0] ?? null) : null;
  const userId = principal.userId ?? null;
  const who = userId ? `user ${userId}` : teamId ? `team ${teamId}` : `organization ${principal.organization}`;
  return { kind: "token", tokenId, tokenKind: principal.tokenKind ?? principal.kind, userId, teamId, description: principal.tokenDescription ?? `${principal.kind} token of ${who}` };
}

/** The actor of a stored API token record (a results-page sign-in acts as the token signed in with). */
export function actorOfToken(record: ApiTokenRecord, kind: "token" | "session" = "token"): AuditActor {
  const admin = record.description === "ADMIN_TOKEN";
  const tokenKind = kind === "session" ? "session" : admin ? "admin" : record.kind;
  const description = kind === "session" ? "results page session" : cutText(record.description || `${record.kind} token`, 128);
  return { kind, tokenId: record.id, tokenKind, userId: record.userId, teamId: record.teamId, description };
}
