import * as z from "zod";
import { randomSecret, sha256Hex } from "../crypto/random.js";
import { ApiError, notFound, quote } from "../errors.js";
import {
  AgentPoolSchema,
  OrganizationSchema,
  PolicySetSchema,
  ProjectSchema,
  TeamSchema,
  UserSchema,
  WorkspaceSchema,
  type Organization,
  type User,
} from "../schemas/directory.js";
import { API_TOKEN_KINDS, type ApiTokenRecord, type VarOwnerKind } from "../schemas/records.js";
import type { Page, PageRequest } from "../schemas/records.js";
import type { ApiTokenListFilter, DirectoryStore } from "../storage/types.js";
import type { Storage } from "../storage/types.js";
import { isoNow, type ServiceContext } from "./context.js";
import { parseOrThrow } from "./validate.js";
import { audited, changesOf } from "./audit.js";
import { sessionOf } from "./principals.js";
import { organizationRecords } from "./directory-organizations.js";

/** decision D53: what a token event names (never the digest, never the secret). */
const TOKEN_FIELDS = ["kind", "userId", "teamId", "description"] as const;

type OwnedSchema = z.ZodObject<{ id: z.ZodString; organization: z.ZodString }>;

/**
 * CRUD for one organization-owned directory aggregate. Ids are optional on create (hosts with their
 * own ids pass them; otherwise one is generated with the aggregate's prefix, D9).
 */
function ownedAggregate<S extends OwnedSchema>(
  ctx: ServiceContext,
  store: DirectoryStore<z.output<S>>,
  schema: S,
  prefix: string,
  /** decision D53: the resource type its events name. */
  resourceType: string,
  hooks: {
    cleanup?: (id: string) => Promise<void>;
    refuseDelete?: (record: z.output<S>) => Promise<void>;
    /** decision D41: throws 409 when another record of the organization holds what must be its own (a team's name). */
    refuseTaken?: (record: z.output<S>) => Promise<void>;
  } = {},
) {
  const createSchema = schema.extend({ id: z.string().min(1).optional() });
  // decision D53: every field but the keys, as the record holds them (a team's members, its owners flag).
  const fields = Object.keys(schema.shape).filter((f) => f !== "id" && f !== "organization") as (keyof z.output<S> & string)[];
  const draft = (record: z.output<S>, action: string, before: z.output<S> | null, after: z.output<S> | null) => ({
    organization: record.organization,
    resource: { type: resourceType, id: record.id },
    action,
    changes: changesOf(before, after, fields),
  });
  return {
    async create(input: Omit<z.input<S>, "id"> & { id?: string }): Promise<z.output<S>> {
      const parsed = parseOrThrow(createSchema, input, "");
      const record = { ...parsed, id: parsed.id ?? ctx.newId(prefix) } as z.output<S>;
      await ensureOrganization(ctx, record.organization);
      await hooks.refuseTaken?.(record);
      if (!(await audited(ctx, draft(record, "create", null, record), () => store.insert(record)))) {
        // The storage's own guard (a unique index) may have refused a name taken meanwhile.
        await hooks.refuseTaken?.(record);
        throw new ApiError("conflict", { detail: `${prefix} ${quote(record.id)} already exists` });
      }
      return record;
    },
    async get(id: string): Promise<z.output<S> | null> {
      return store.get(id);
    },
    async update(id: string, patch: Partial<Omit<z.input<S>, "id" | "organization">>): Promise<z.output<S>> {
      const current = await store.get(id);
      if (!current) throw notFound();
      const next = parseOrThrow(schema, { ...current, ...patch, id, organization: current.organization }, "");
      await hooks.refuseTaken?.(next);
      const replaced = await audited(ctx, draft(next, "update", current, next), () => store.replace(next)).catch(async (error: unknown) => {
        await hooks.refuseTaken?.(next); // a name taken meanwhile: the storage's unique index refused it
        throw error;
      });
      if (!replaced) throw notFound();
      return next;
    },
    async delete(id: string): Promise<boolean> {
      const current = await store.get(id);
      if (!current) return false;
      await hooks.refuseDelete?.(current);
      const removed = await audited(ctx, draft(current, "destroy", current, null), () => store.delete(id));
      if (removed && hooks.cleanup) await hooks.cleanup(id);
      return removed;
    },
    async list(organization: string): Promise<z.output<S>[]> {
      return store.listByOrganization(organization);
    },
  };
}

/** decision D41: a team name is one team's in its organization. */
const refuseTakenTeamName =
  (s: Storage) =>
  async (team: { id: string; name: string; organization: string }): Promise<void> => {
    const taken = (await s.teams.listByOrganization(team.organization)).some((t) => t.name === team.name && t.id !== team.id);
    if (taken) throw new ApiError("conflict", { detail: `team name ${quote(team.name)} is taken in organization ${quote(team.organization)}` });
  };

async function ensureOrganization(ctx: ServiceContext, name: string): Promise<void> {
  if (!(await ctx.storage.organizations.get(name))) throw new ApiError("not-found", { detail: `organization ${quote(name)} does not exist` });
}

const UserCreateSchema = UserSchema.extend({ id: z.string().min(1).optional() });

/** The shortest secret a host may choose for an API token (ADMIN_TOKEN of the reference server). */
export const API_TOKEN_SECRET_MIN_LENGTH = 16;

export const ApiTokenRequestSchema = z.object({
  organization: z.string().min(1),
  kind: z.enum(API_TOKEN_KINDS),
  userId: z.string().min(1).optional(),
  teamId: z.string().min(1).optional(),
  description: z.string().max(256).default(""),
  /** A secret chosen by the host (e.g. ADMIN_TOKEN); generated when omitted. */
  secret: z.string().min(API_TOKEN_SECRET_MIN_LENGTH).optional(),
});
export type ApiTokenRequest = z.input<typeof ApiTokenRequestSchema>;

/** An API token as operators see it: everything but its digest (the core decides what leaves it). */
export type ApiTokenView = Omit<ApiTokenRecord, "digest">;
const toApiTokenView = ({ digest: _digest, ...view }: ApiTokenRecord): ApiTokenView => view;

/** Users, with an id from the host or a new one. */
function userRecords(ctx: ServiceContext) {
  const s = ctx.storage;
  return {
    async create(input: z.input<typeof UserCreateSchema>): Promise<User> {
      const parsed = parseOrThrow(UserCreateSchema, input, "");
      const record = { ...parsed, id: parsed.id ?? ctx.newId("user") };
      if (!(await s.users.insert(record))) throw new ApiError("conflict", { detail: `user ${quote(record.id)} already exists` });
      return record;
    },
    get: (id: string) => s.users.get(id),
    async update(id: string, patch: Partial<Omit<User, "id">>): Promise<User> {
      const current = await s.users.get(id);
      if (!current) throw notFound();
      const next = parseOrThrow(UserSchema, { ...current, ...patch, id }, "");
      await s.users.replace(next);
      return next;
    },
    delete: (id: string) => s.users.delete(id),
  };
}

/**
 * decision D34: a pool that a run task still names is not deleted (422), as HCP Terraform refuses
 * to delete a pool its workspaces still use; the host first moves or deletes those tasks. A task
 * bound while the delete runs may still name the pool afterwards: its requests then find no agent.
 */
const refuseNamedPool = (s: Storage) => async (pool: { id: string; name: string }) => {
  const count = await s.runTasks.countByAgentPool(pool.id);
  if (count === 0) return;
  const tasks = count === 1 ? "1 run task names it" : `${count} run tasks name it`;
  throw new ApiError("invalid-attribute", { detail: `agent pool ${quote(pool.name)} (${pool.id}) cannot be deleted: ${tasks}; change or delete those tasks first` });
};

/**
 * A deleted pool takes its agent tokens along: a pool created again with the same id (the host
 * chooses ids) must not find them verifying again. Its agents' records stay: a pool created again
 * with the same id lists them, no longer reporting (`unknown` or `exited`).
 */
const dropPoolTokens = (s: Storage) => async (poolId: string) => {
  for (;;) {
    const page = await s.agentTokens.listByPool(poolId, { offset: 0, limit: 100 }, "asc");
    if (page.items.length === 0) return;
    for (const token of page.items) await s.agentTokens.delete(token.id);
  }
};

/**
 * Host-side records the API refers to but does not manage over HTTP (organizations, projects,
 * workspaces, teams, users, policy sets, agent pools) and the API tokens of the default authenticator.
 */
export function createDirectory(ctx: ServiceContext) {
  const s = ctx.storage;
  const dropVars = (kind: VarOwnerKind) => async (id: string) => {
    await s.variables.deleteByOwner({ kind, id });
  };

  return {
    organizations: organizationRecords(ctx),
    // A deleted team or project takes its grants along: a team recreated with the same id must not
    // inherit them, and no grant of a vanished team stays listed (the service also 404s orphans).
    projects: ownedAggregate(ctx, s.projects, ProjectSchema, "prj", "project", { cleanup: async (id) => void (await s.teamProjects.deleteByProject(id)) }),
    workspaces: ownedAggregate(ctx, s.workspaces, WorkspaceSchema, "ws", "workspace", { cleanup: dropVars("workspace") }),
    teams: ownedAggregate(ctx, s.teams, TeamSchema, "team", "team", { cleanup: async (id) => void (await s.teamProjects.deleteByTeam(id)), refuseTaken: refuseTakenTeamName(s) }),
    policySets: ownedAggregate(ctx, s.policySets, PolicySetSchema, "polset", "policy-set", { cleanup: dropVars("policy-set") }),
    agentPools: ownedAggregate(ctx, s.agentPools, AgentPoolSchema, "apool", "agent-pool", { refuseDelete: refuseNamedPool(s), cleanup: dropPoolTokens(s) }),
    users: userRecords(ctx),

    /**
     * Issues an API token for the default authenticator. The secret is returned once and stored only
     * as a SHA-256 digest (D11).
     */
    async createApiToken(input: ApiTokenRequest): Promise<{ id: string; token: string }> {
      const req = parseOrThrow(ApiTokenRequestSchema, input, "");
      await ensureOrganization(ctx, req.organization);
      if (req.kind === "user" && !req.userId) throw new ApiError("invalid-attribute", { detail: "userId is required for a user token" });
      if (req.kind === "team" && !req.teamId) throw new ApiError("invalid-attribute", { detail: "teamId is required for a team token" });
      const id = ctx.newId("at");
      const token = req.secret ?? `${id}.${randomSecret()}`;
      const record: ApiTokenRecord = {
        id,
        digest: sha256Hex(token),
        organization: req.organization,
        kind: req.kind,
        userId: req.kind === "user" ? (req.userId ?? null) : null,
        teamId: req.kind === "team" ? (req.teamId ?? null) : null,
        description: req.description,
        createdAt: isoNow(ctx),
        lastUsedAt: null,
      };
      // decision D53: a results-page session is a sign-in; any other record an API token created.
      const session = sessionOf(record) !== null;
      const draft = { organization: record.organization, resource: { type: session ? "session" : "api-token", id }, action: session ? "sign-in" : "create", changes: changesOf(null, record, TOKEN_FIELDS) };
      if (!(await audited(ctx, draft, () => s.apiTokens.insert(record)))) throw new ApiError("conflict", { detail: "that token is already registered" });
      return { id, token };
    },
    /** The stored record of an API token whose secret is `token`, or null. */
    findApiToken: (token: string) => s.apiTokens.findByDigest(sha256Hex(token)),
    /** Revokes at once: the access cache holds nothing past the directory change it makes (D21). */
    async revokeApiToken(id: string): Promise<boolean> {
      const record = await s.apiTokens.get(id);
      if (!record) return false;
      const draft = { organization: record.organization, resource: { type: "api-token", id }, action: "revoke", changes: changesOf(record, null, TOKEN_FIELDS) };
      return audited(ctx, draft, () => s.apiTokens.delete(id));
    },
    /** An organization's API tokens (or one team's) by creation, metadata only; all without `page`. */
    async listApiTokens(filter: ApiTokenListFilter, page?: PageRequest): Promise<Page<ApiTokenView>> {
      const { items, total } = await s.apiTokens.list(filter, page);
      return { items: items.map(toApiTokenView), total };
    },
    getApiToken: async (id: string): Promise<ApiTokenView | null> => {
      const record = await s.apiTokens.get(id);
      return record && toApiTokenView(record);
    },
  };
}
export type Directory = ReturnType<typeof createDirectory>;
