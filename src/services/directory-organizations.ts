import type * as z from "zod";
import { counted } from "../domain/words.js";
import { ApiError, notFound, quote } from "../errors.js";
import { OrganizationSchema, type Organization } from "../schemas/directory.js";
import type { Storage } from "../storage/types.js";
import { audited, changesOf } from "./audit.js";
import type { ServiceContext } from "./context.js";
import { parseOrThrow } from "./validate.js";

/**
 * An organization is deleted only once nothing of it is left (found from outside: its teams and
 * tokens outlived it, its old owners token kept reading, and a new organization of the name
 * inherited them). A record created while the delete runs may still outlive it: creating the name
 * again is refused until it is gone.
 */
async function refuseHeldOrganization(s: Storage, name: string): Promise<void> {
  const held = [
    counted((await s.projects.listByOrganization(name)).length, "project"),
    counted((await s.workspaces.listByOrganization(name)).length, "workspace"),
    counted((await s.teams.listByOrganization(name)).length, "team"),
    counted((await s.policySets.listByOrganization(name)).length, "policy set"),
    counted((await s.agentPools.listByOrganization(name)).length, "agent pool"),
    counted((await s.apiTokens.list({ organization: name }, { offset: 0, limit: 1 })).total, "API token"),
  ].filter((text) => !text.startsWith("0 "));
  if (held.length === 0) return;
  const list = held.length === 1 ? held[0] : `${held.slice(0, -1).join(", ")} and ${held.at(-1)}`;
  // API tokens are revoked, not deleted; a results-page sign-in is one too (listApiTokens shows it).
  throw new ApiError("conflict", { detail: `organization ${quote(name)} still has ${list}: delete them (revoke the tokens, results-page sign-ins included) first` });
}

/** decision D53: what an organization's events name. */
const ORGANIZATION_FIELDS = ["email"] as const;

/**
 * Organizations, addressed by their unique name. decision D53: each write is recorded in the
 * organization's own trail (its creation is the trail's first event; its deletion the last, and the
 * trail stays).
 */
export function organizationRecords(ctx: ServiceContext) {
  const s = ctx.storage;
  const draft = (name: string, action: string, before: Organization | null, after: Organization | null) => ({
    organization: name,
    resource: { type: "organization", id: name },
    action,
    changes: changesOf(before, after, ORGANIZATION_FIELDS),
  });
  return {
    async create(input: z.input<typeof OrganizationSchema>): Promise<Organization> {
      const record = parseOrThrow(OrganizationSchema, input, "");
      // Records left under the name (a delete that raced a creation, or one from before deletes
      // were refused) would belong to the new organization: its owners team, its tokens.
      if (!(await s.organizations.get(record.name))) await refuseHeldOrganization(s, record.name);
      if (!(await audited(ctx, draft(record.name, "create", null, record), () => s.organizations.insert(record)))) throw new ApiError("conflict", { detail: `organization ${quote(record.name)} already exists` });
      return record;
    },
    get: (name: string) => s.organizations.get(name),
    async update(name: string, patch: Partial<Omit<Organization, "name">>): Promise<Organization> {
      const current = await s.organizations.get(name);
      if (!current) throw notFound();
      const next = parseOrThrow(OrganizationSchema, { ...current, ...patch, name }, "");
      await audited(ctx, draft(name, "update", current, next), () => s.organizations.replace(next));
      return next;
    },
    async delete(name: string): Promise<boolean> {
      const current = await s.organizations.get(name);
      if (!current) return false;
      await refuseHeldOrganization(s, name);
      return audited(ctx, draft(name, "destroy", current, null), () => s.organizations.delete(name));
    },
  };
}

