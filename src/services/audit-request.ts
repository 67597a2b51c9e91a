import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { isIP } from "node:net";
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

/** Who the host says acts through its own code (`runplane.audit.as`, decision D53). */
export interface HostActor {
  /** A readable name: "alice (admin console)", "provisioning job". Required; past 256 characters cut, with an ellipsis. */
  description: string;
  /** The host's user or team behind it, if any (cut like the description). */
  userId?: string;
  teamId?: string;
  /** The host's request id for the change (letters, digits, `._:-`, at most 128), and its client's IP address. */
  requestId?: string;
  clientAddress?: string;
}

const bounded = (text: string | undefined): string | null => (text === undefined ? null : cutText(text, 256));

/**
 * Runs `fn` with `actor` as the actor of every change it records (inside an HTTP request too: the
 * host's word replaces the credential's). Throws a TypeError for an actor it cannot record truly.
 */
export function asHostActor<R>(actor: HostActor, fn: () => R): R {
  if (typeof actor?.description !== "string" || actor.description.trim() === "") throw new TypeError("audit.as: description must name who acts");
  // Found from outside: a number as userId failed deep inside with "value.charCodeAt is not a function".
  for (const field of ["userId", "teamId", "requestId", "clientAddress"] as const) {
    if (actor[field] !== undefined && typeof actor[field] !== "string") throw new TypeError(`audit.as: ${field} must be a string when given`);
  }
  if (actor.requestId !== undefined && !REQUEST_ID.test(actor.requestId)) throw new TypeError("audit.as: requestId must be 1-128 letters, digits or ._:-");
  // As the HTTP path records it (decision D62): an IP address, never other text.
  if (actor.clientAddress !== undefined && (actor.clientAddress.length > 64 || isIP(actor.clientAddress) === 0)) throw new TypeError("audit.as: clientAddress must be an IP address");
  const current = requests.getStore();
  const named: AuditActor = { kind: "host", tokenId: null, tokenKind: null, userId: bounded(actor.userId), teamId: bounded(actor.teamId), description: cutText(actor.description, 256) };
  return requests.run(
    { ...current, requestId: actor.requestId ?? current?.requestId ?? null, clientAddress: bounded(actor.clientAddress) ?? current?.clientAddress ?? null, actor: named },
    fn,
  );
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
