import { randomUUID } from "node:crypto";
import { cutText } from "../errors.js";
import type { AuditChange, AuditEvent } from "../schemas/audit.js";
import { isApplied, withAuditEvent } from "../storage/audit-scope.js";
import type { Storage } from "../storage/types.js";
import { currentAuditRequest, SYSTEM_ACTOR } from "./audit-request.js";
import type { ServiceContext } from "./context.js";

/** What a service says of a change; the actor, request, id and time come from the scope and the clock. */
export interface AuditDraft {
  organization: string;
  resource: { type: string; id: string };
  action: string;
  changes?: AuditChange[];
}

export type AuditListener = (event: AuditEvent) => void;

// Keyed by the storage: one instance's services share it however their contexts are copied.
const listeners = new WeakMap<Storage, Set<AuditListener>>();

export function auditListenersOf(storage: Storage): Set<AuditListener> {
  let set = listeners.get(storage);
  if (!set) listeners.set(storage, (set = new Set()));
  return set;
}

/** Longest text a value or name keeps in the trail; anything a client sent is cut to it. */
const MAX_TEXT = 256;
const MAX_CHANGES = 32;

const bounded = (text: string): string => cutText(text, MAX_TEXT);

/** A value as the trail keeps it: primitives as they are (strings bounded), anything else as bounded JSON text. */
function boundedValue(value: unknown): unknown {
  if (value === null || typeof value === "boolean" || typeof value === "number") return value;
  if (typeof value === "string") return bounded(value);
  if (value === undefined) return null;
  return bounded(JSON.stringify(value) ?? "null");
}

/**
 * The event of `draft` now, as the current request's actor (or the system outside any request).
 * Every object lists its keys in sorted order, so its canonical JSON (the chain's digest, D59) is
 * plain JSON.stringify.
 */
export function auditEventOf(ctx: Pick<ServiceContext, "now">, draft: AuditDraft): AuditEvent {
  const request = currentAuditRequest();
  const a = request?.actor ?? SYSTEM_ACTOR;
  return {
    action: bounded(draft.action),
    actor: { description: a.description, kind: a.kind, teamId: a.teamId, tokenId: a.tokenId, tokenKind: a.tokenKind, userId: a.userId },
    at: ctx.now().getTime(),
    changes: (draft.changes ?? []).slice(0, MAX_CHANGES).map(boundedChange),
    id: randomUUID(),
    organization: draft.organization,
    request: { clientAddress: request?.clientAddress ?? null, id: request?.requestId ?? null },
    resource: { id: bounded(draft.resource.id), type: bounded(draft.resource.type) },
  };
}

function boundedChange(c: AuditChange): AuditChange {
  if (c.note) return { field: bounded(c.field), note: c.note };
  return { field: bounded(c.field), ...("new" in c ? { new: boundedValue(c.new) } : {}), ...("old" in c ? { old: boundedValue(c.old) } : {}) };
}

/**
 * decision D53: runs the one storage write `write` with its event, which the storage records in the
 * write's own transaction only when it applied; then tells the `on("audit")` listeners. A storage
 * without an audit store records nothing.
 */
export async function audited<R>(ctx: ServiceContext, draft: AuditDraft, write: () => Promise<R>): Promise<R> {
  if (!ctx.storage.audit) return write();
  const event = auditEventOf(ctx, draft);
  const result = await withAuditEvent(event, write);
  if (isApplied(result)) notifyAudit(ctx, event);
  return result;
}

/** Appends an event that goes with no stored change of its own (a sign-in, a keyring reload). */
export async function recordAudit(ctx: ServiceContext, draft: AuditDraft): Promise<void> {
  if (!ctx.storage.audit) return;
  const event = auditEventOf(ctx, draft);
  await ctx.storage.audit.append(event);
  notifyAudit(ctx, event);
}

function notifyAudit(ctx: ServiceContext, event: AuditEvent): void {
  if (!ctx.storage.audit) return;
  for (const listener of auditListenersOf(ctx.storage)) {
    try {
      listener(event);
    } catch (error) {
      // A host's listener must not fail the write it hears about (already committed).
      ctx.logger.error("an audit listener threw", { error: error instanceof Error ? error.name : typeof error });
    }
  }
}

/**
 * The fields that differ between `before` and `after` (`before` null: a creation, every named field;
 * `after` null: a deletion). A field in `secret` is only ever "value changed".
 */
export function changesOf<T extends object>(before: T | null, after: T | null, fields: readonly (keyof T & string)[], secret: readonly string[] = []): AuditChange[] {
  const changes: AuditChange[] = [];
  for (const field of fields) {
    const old = before?.[field];
    const next = after?.[field];
    if (before && after && JSON.stringify(old) === JSON.stringify(next)) continue;
    if (secret.includes(field)) changes.push({ field, note: "value changed" });
    else changes.push({ field, ...(before ? { old } : {}), ...(after ? { new: next } : {}) });
  }
  return changes;
}

/**
 * decision D53: a change of the whole instance (the keyring) is recorded in every organization that
 * has a trail, each in its own chain, as the current actor (the system outside a request).
 */
export async function recordInEveryOrganization(ctx: Pick<ServiceContext, "storage" | "now">, draft: Omit<AuditDraft, "organization">): Promise<void> {
  const audit = ctx.storage.audit;
  if (!audit) return;
  for (const organization of await audit.organizations()) {
    const event = auditEventOf(ctx, { ...draft, organization });
    await audit.append(event);
    for (const listener of auditListenersOf(ctx.storage)) {
      try {
        listener(event);
      } catch {
        // A host's listener must not fail a change already made.
      }
    }
  }
}
