import type { AuditEvent } from "../../schemas/audit.js";
import { createChainWalker } from "../../storage/audit-chain.js";
import type { AuditStore } from "../../storage/audit-types.js";

/** Events and the chain walk the audit conformance cases and the adapters' audit tests share. */
/** The time the fixtures count from: event n is n seconds after it. */
export const T0 = Date.UTC(2026, 0, 1);

export function auditEvent(n: number, overrides: Partial<AuditEvent> = {}): AuditEvent {
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
    organization: "acme",
    at: T0 + n * 1000,
    actor: { kind: "token", tokenId: "at-AAAAAAAAAAAAAAAA", tokenKind: "team", userId: null, teamId: "team-owners", description: "team owners" },
    request: { id: `req-${n}`, clientAddress: "192.0.2.7" },
    resource: { type: "var", id: `var-${n}` },
    action: "update",
    changes: [{ field: "value", note: "value changed" }],
    ...overrides,
  };
}

/** Every entry of an organization, walked as `runplane audit verify` walks it: the first break or null. */
export async function walkChain(audit: AuditStore, organization: string) {
  const head = await audit.head(organization);
  if (!head) return null;
  const walker = createChainWalker(head, organization);
  for (let after = head.prunedSeq; ; ) {
    const rows = await audit.scan(organization, after, 500);
    for (const row of rows) {
      const broken = walker.next(row);
      if (broken) return broken;
    }
    if (rows.length < 500) return walker.end();
    after = rows.at(-1)!.seq;
  }
}

