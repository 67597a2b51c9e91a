import type { AuditEntry } from "../../schemas/audit.js";
import type { Route } from "../types.js";

/** HCP Terraform's audit trail schema version (its events say "0"). */
const AUDIT_TRAIL_VERSION = "0";

/**
 * One event in HCP Terraform's audit trail shape (not JSON:API; go-tfe's `AuditTrail`): `id`,
 * `version`, `type`, `timestamp`, `auth` (`accessor_id`, `description`, `type`, `impersonator_id`,
 * `organization_id`), `request` (`id`) and `resource` (`id`, `type`, `action`, `meta`). runplane adds
 * the actor's kind and the user or team behind it to `auth`, the client's address to `request`, and
 * the changed fields and the chain (decision D53) to `resource.meta`. Every key is snake_case, as HCP's.
 */
export function auditTrailItem(entry: AuditEntry) {
  const { actor } = entry;
  return {
    id: entry.id,
    version: AUDIT_TRAIL_VERSION,
    type: "Resource",
    timestamp: new Date(entry.at).toISOString(),
    auth: {
      // A host-named actor (D53) has no credential: the user or team it named stands for it.
      accessor_id: actor.tokenId ?? actor.userId ?? actor.teamId ?? "runplane",
      description: actor.description,
      type: actor.kind === "system" ? "System" : "Client",
      impersonator_id: null,
      organization_id: entry.organization,
      token_kind: actor.tokenKind,
      user_id: actor.userId,
      team_id: actor.teamId,
    },
    request: { id: entry.request.id ?? "", client_address: entry.request.clientAddress },
    resource: {
      id: entry.resource.id,
      type: entry.resource.type,
      action: entry.action,
      meta: { changes: entry.changes, seq: entry.seq, prev: entry.prev, digest: entry.digest },
    },
  };
}

/** HCP's pagination block beside `data` (null where there is no previous or next page). */
export function auditPagination(page: { number: number; size: number }, total: number) {
  const totalPages = Math.max(1, Math.ceil(total / page.size));
  return {
    current_page: page.number,
    prev_page: page.number > 1 ? page.number - 1 : null,
    next_page: page.number < totalPages ? page.number + 1 : null,
    total_pages: totalPages,
    total_count: total,
  };
}

/**
 * decision D53: `GET /organization/audit-trail`, the caller's own organization's events, oldest
 * first, read by an organization-level credential: owners (an organization token, an owners team
 * token, the reference server's ADMIN_TOKEN, a member of owners); anyone else gets 404 (D4).
 */
export const auditTrailRoutes: Route[] = [
  {
    method: "GET",
    path: "/organization/audit-trail",
    auth: "principal",
    query: { filters: [{ name: "since" }, { name: "page[number]" }, { name: "page[size]" }] },
    async handle(ctx) {
      const organization = ctx.principal.organization;
      await ctx.authorize({ organization });
      const { filters } = ctx.query;
      const page = { number: pageParam(filters["page[number]"]), size: pageParam(filters["page[size]"]) };
      const result = await ctx.app.services.audit.list(organization, {
        ...(filters.since === undefined ? {} : { since: filters.since }),
        page: { ...(page.number === undefined ? {} : { number: page.number }), ...(page.size === undefined ? {} : { size: page.size }) },
      });
      const body = JSON.stringify({ data: result.items.map(auditTrailItem), pagination: auditPagination(result.page, result.total) });
      return { response: new Response(body, { status: 200, headers: { "content-type": "application/json" } }) };
    },
  },
];

/** A page parameter as given: a number when it is all digits, NaN otherwise (the service answers 400). */
const pageParam = (raw: string | undefined): number | undefined => (raw === undefined ? undefined : /^\d{1,9}$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN);
