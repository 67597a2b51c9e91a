import { randomSecret, safeEqual, sha256Hex } from "../crypto/random.js";
import { audited, changesOf } from "./audit.js";
import { ApiError, badRequest, notFound } from "../errors.js";
import {
  AGENT_TOKEN_SORTS,
  AgentTokenCreateSchema,
  AgentTokenCreatorSchema,
  type AgentTokenCreator,
  type AgentTokenSort,
  type AgentTokenView,
  type VerifiedAgentToken,
} from "../schemas/agent-tokens.js";
import type { Principal } from "../schemas/common.js";
import type { AgentPool } from "../schemas/directory.js";
import type { AgentTokenRecord, Page, PageRequest } from "../schemas/records.js";
import { isStorageUnavailableError } from "../storage/unavailable.js";
import type { Storage } from "../storage/types.js";
import { isoNow, type ServiceContext } from "./context.js";
import { parseOrThrow } from "./validate.js";

const ATTRIBUTES = "/data/attributes";
const DEFAULT_PAGE: PageRequest = { offset: 0, limit: 20 };
const MAX_PAGE_SIZE = 100;
/** `last-used-at` is written at most this often per token, as for API tokens: agents poll often. */
const TOUCH_INTERVAL_MS = 60_000;
/** Far longer than any token issued here; longer input is refused before it is hashed. */
const MAX_TOKEN_LENGTH = 1024;
/**
 * decision D22: `<token id>.<pool id>.<43 base64url chars>`. Token ids and the secret never hold a
 * dot, a host-chosen pool id may: the first and the last dot split the string.
 */
const TOKEN_SHAPE = /^([^.]+)\.([\s\S]+)\.([A-Za-z0-9_-]{43})$/;
/** Compared against when no record matched, so a miss costs the same compare as a hit. */
const NO_DIGEST = "0".repeat(64);

export interface AgentTokenCreateInput {
  description: string;
  createdBy: AgentTokenCreator;
}

export interface AgentTokenListOptions {
  /** Default: the first 20. `limit` 1..100. */
  page?: PageRequest;
  /** `created-at` (default, oldest first) or `-created-at`; ties are broken by id the same way. */
  sort?: AgentTokenSort | string;
}

/** The `created-by` of a token created over HTTP: the user, else the team, else the organization. */
export function creatorForPrincipal(principal: Principal): AgentTokenCreator {
  if (principal.kind === "user" && principal.userId) return { type: "users", id: principal.userId };
  if (principal.kind === "team" && principal.teamIds[0]) return { type: "teams", id: principal.teamIds[0] };
  return { type: "organizations", id: principal.organization };
}

const errorName = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

/** A page of a programmatic list call: 422 naming the parameter when out of range (the routes check theirs first). */
export function checkPage(page: PageRequest): PageRequest {
  const { offset, limit } = page;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new ApiError("invalid-attribute", { parameter: "page[number]", detail: "page[number] must be at least 1" });
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new ApiError("invalid-attribute", { parameter: "page[size]", detail: `page[size] must be between 1 and ${MAX_PAGE_SIZE}` });
  }
  return page;
}

function checkSort(sort: string | undefined): "asc" | "desc" {
  const value = sort ?? "created-at";
  if (!(AGENT_TOKEN_SORTS as readonly string[]).includes(value)) {
    throw badRequest(`sort must be one of: ${AGENT_TOKEN_SORTS.join(", ")}`, "sort");
  }
  return value === "-created-at" ? "desc" : "asc";
}

const toView = (r: AgentTokenRecord, pool: AgentPool): AgentTokenView => ({
  id: r.id,
  agentPoolId: r.agentPoolId,
  organization: pool.organization,
  description: r.description,
  createdAt: r.createdAt,
  lastUsedAt: r.lastUsedAt,
  createdBy: { type: r.createdByType, id: r.createdById },
  token: null,
  expiredAt: null,
});

async function poolOf(s: Storage, agentPoolId: string): Promise<AgentPool> {
  const pool = await s.agentPools.get(agentPoolId);
  if (!pool) throw notFound();
  return pool;
}

/** A token and its pool; a token whose pool is gone counts as missing. */
async function tokenAndPool(s: Storage, tokenId: string): Promise<{ record: AgentTokenRecord; pool: AgentPool }> {
  const record = await s.agentTokens.get(tokenId);
  const pool = record ? await s.agentPools.get(record.agentPoolId) : null;
  if (!record || !pool) throw notFound();
  return { record, pool };
}

/** decision D53: what an agent token event names (never the digest, never the token). */
const AGENT_TOKEN_FIELDS = ["agentPoolId", "description", "createdByType", "createdById"] as const;

/**
 * Stores a new token, or throws leaving none behind: a failed write is undone before the error is
 * raised (a 500, or the 503 of a storage that is away, D28).
 */
async function insertOrUndo(ctx: ServiceContext, record: AgentTokenRecord): Promise<void> {
  const store = ctx.storage.agentTokens;
  let inserted = false;
  let failure: unknown;
  try {
    // decision D53: the creation is recorded with the token, in its transaction.
    const draft = { organization: record.organization, resource: { type: "agent-token", id: record.id }, action: "create", changes: changesOf(null, record, AGENT_TOKEN_FIELDS) };
    inserted = await audited(ctx, draft, () => store.insert(record));
  } catch (error) {
    failure = error;
  }
  if (inserted) return;
  // A store that wrote and then failed must not keep a token whose secret nobody received.
  if (failure !== undefined) await store.delete(record.id).catch(() => false);
  // decision D28: a storage that is away is a 503 to retry, not a fault.
  if (isStorageUnavailableError(failure)) throw failure;
  // Ids and secrets are fresh random values: a refused insert is as unexpected as a throw.
  ctx.logger.error("agent token create failed", { agentPoolId: record.agentPoolId, tokenId: record.id, error: failure === undefined ? "refused" : errorName(failure) });
  throw new ApiError("internal");
}

/**
 * Agent pool authentication tokens (spec 2.7, 4.7; decisions D11, D22). The token string is returned
 * by `create` only; storage keeps its SHA-256 digest, and nothing here logs either.
 */
export function createAgentTokenService(ctx: ServiceContext) {
  const store = () => ctx.storage.agentTokens;
  const requirePool = (agentPoolId: string): Promise<AgentPool> => poolOf(ctx.storage, agentPoolId);
  const load = (tokenId: string) => tokenAndPool(ctx.storage, tokenId);

  return {
    async list(agentPoolId: string, options: AgentTokenListOptions = {}): Promise<Page<AgentTokenView>> {
      const pool = await requirePool(agentPoolId);
      const order = checkSort(options.sort);
      const page = await store().listByPool(pool.id, checkPage(options.page ?? DEFAULT_PAGE), order);
      return { items: page.items.map((r) => toView(r, pool)), total: page.total };
    },

    async get(tokenId: string): Promise<AgentTokenView> {
      const { record, pool } = await load(tokenId);
      return toView(record, pool);
    },

    /**
     * Issues a token. The result is the only place its `token` ever appears. A storage failure is a
     * 500 that leaves no token behind (a failed write is undone before the error is raised).
     */
    async create(agentPoolId: string, input: AgentTokenCreateInput): Promise<AgentTokenView & { token: string }> {
      const pool = await requirePool(agentPoolId);
      const { description } = parseOrThrow(AgentTokenCreateSchema, { description: input?.description }, ATTRIBUTES);
      const createdBy = parseOrThrow(AgentTokenCreatorSchema, input?.createdBy, "/createdBy");
      const id = ctx.newId("at");
      const token = `${id}.${pool.id}.${randomSecret()}`;
      const record: AgentTokenRecord = {
        id,
        agentPoolId: pool.id,
        organization: pool.organization,
        description,
        digest: sha256Hex(token),
        createdAt: isoNow(ctx),
        lastUsedAt: null,
        createdByType: createdBy.type,
        createdById: createdBy.id,
      };
      await insertOrUndo(ctx, record);
      return { ...toView(record, pool), token };
    },

    async delete(tokenId: string): Promise<void> {
      const { record } = await load(tokenId);
      const draft = { organization: record.organization, resource: { type: "agent-token", id: tokenId }, action: "revoke", changes: changesOf(record, null, AGENT_TOKEN_FIELDS) };
      if (!(await audited(ctx, draft, () => store().delete(tokenId)))) throw notFound();
    },

    /**
     * The pool and token a presented token string belongs to, or null: wrong shape, unknown, deleted,
     * naming another token or pool, or of a pool that no longer exists. Looks the token up by the
     * digest and compares in constant time; records `last-used-at` (at most once a minute).
     */
    async verify(token: string): Promise<VerifiedAgentToken | null> {
      if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) return null;
      const shape = TOKEN_SHAPE.exec(token);
      if (!shape) return null;
      const [, tokenId = "", poolId = ""] = shape;
      const digest = sha256Hex(token);
      const record = await store().findByDigest(digest);
      // Every comparison runs, hit or miss, so the time taken does not tell which one failed.
      const digestMatches = safeEqual(record?.digest ?? NO_DIGEST, digest);
      const idMatches = safeEqual(record?.id ?? "", tokenId);
      const poolMatches = safeEqual(record?.agentPoolId ?? "", poolId);
      if (!record || !(digestMatches && idMatches && poolMatches)) return null;
      const pool = await ctx.storage.agentPools.get(record.agentPoolId);
      if (!pool || pool.organization !== record.organization) return null;
      const now = ctx.now();
      if (record.lastUsedAt === null || now.getTime() - Date.parse(record.lastUsedAt) >= TOUCH_INTERVAL_MS) {
        // false: deleted since the lookup, and a deleted token never verifies.
        if (!(await store().touch(record.id, now.toISOString()))) return null;
      }
      return { tokenId: record.id, agentPoolId: record.agentPoolId };
    },
  };
}
export type AgentTokenService = ReturnType<typeof createAgentTokenService>;
