import { withRevisions } from "./revisions.js";
import { createMemoryAuditStore, withMemoryAudit } from "./audit.js";
import { createMemoryTeamProjectStore } from "./team-projects.js";
import type { Organization, Team, User } from "../../src/schemas/directory.js";
import type { ApiTokenRecord, Page, PageRequest, VariableRecord, VarOwner } from "../../src/schemas/records.js";
import type {
  ApiTokenStore,
  DirectoryStore,
  OrganizationStore,
  Storage,
  TeamStore,
  UserStore,
  VariableStore,
} from "../../src/storage/types.js";
import type { AgentTokenRecord } from "../../src/schemas/records.js";
import type { AgentTokenStore } from "../../src/storage/types.js";
import { createMemoryRunTaskStores } from "./run-tasks.js";
import { createMemorySealedValueStore, memorySealedSlots } from "./sealed-values.js";
import { createMemoryCommentStore } from "./comments.js";
import { createMemoryHostStore } from "./hosts.js";
import { createMemoryAgentStore } from "./agents.js";
import { clone } from "./clone.js";

/**
 * In-memory Storage for tests, demos and single-process hosts that do not need durability.
 * Records are cloned on the way in and out, so callers can never mutate stored state by reference.
 * Every method completes synchronously inside its promise, which makes each one atomic in a single
 * JavaScript thread: the guarded primitives need no locks.
 */
export function createMemoryStorage(): Storage {
  const variableRows = new Map<string, VariableRecord>();
  const runTasks = createMemoryRunTaskStores();
  // decision D53: the audit trail wraps the outermost stores, so its events follow applied writes only.
  return withMemoryAudit(withRevisions({
    // decision D53: audit verify walks every organization.
    organizations: (({ keys, ...store }) => ({ ...store, names: keys }))(keyedStore<Organization>((o) => o.name)) satisfies OrganizationStore,
    projects: directoryStore(),
    workspaces: directoryStore(),
    teams: teamStore(),
    users: (({ keys: _keys, ...store }) => store)(keyedStore<User>((u) => u.id)) satisfies UserStore,
    policySets: directoryStore(),
    agentPools: directoryStore(),
    apiTokens: apiTokenStore(),
    variables: variableStore(variableRows),
    agentTokens: agentTokenStore(),
    agents: createMemoryAgentStore(),
    ...runTasks.stores,
    teamProjects: createMemoryTeamProjectStore(),
    comments: createMemoryCommentStore(),
    hosts: createMemoryHostStore(),
    sealedValues: createMemorySealedValueStore(memorySealedSlots({ variables: variableRows, ...runTasks.sealed })),
    async close() {},
  }), createMemoryAuditStore());
}

const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const byCreation = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : byId(a, b);

interface KeyedStore<T> {
  get(key: string): Promise<T | null>;
  insert(record: T): Promise<boolean>;
  replace(record: T): Promise<boolean>;
  delete(key: string): Promise<boolean>;
  keys(): Promise<string[]>;
}

function keyedStore<T>(keyOf: (record: T) => string): KeyedStore<T> {
  const rows = new Map<string, T>();
  return {
    async get(key) {
      const row = rows.get(key);
      return row === undefined ? null : clone(row);
    },
    async insert(record) {
      if (rows.has(keyOf(record))) return false;
      rows.set(keyOf(record), clone(record));
      return true;
    },
    async replace(record) {
      if (!rows.has(keyOf(record))) return false;
      rows.set(keyOf(record), clone(record));
      return true;
    },
    async delete(key) {
      return rows.delete(key);
    },
    async keys() {
      return [...rows.keys()].sort();
    },
  };
}

function directoryRows<T extends { id: string; organization: string }>() {
  const rows = new Map<string, T>();
  const store: DirectoryStore<T> = {
    async get(id) {
      const row = rows.get(id);
      return row === undefined ? null : clone(row);
    },
    async insert(record) {
      if (rows.has(record.id)) return false;
      rows.set(record.id, clone(record));
      return true;
    },
    async replace(record) {
      if (!rows.has(record.id)) return false;
      rows.set(record.id, clone(record));
      return true;
    },
    async delete(id) {
      return rows.delete(id);
    },
    async listByOrganization(organization) {
      return [...rows.values()].filter((r) => r.organization === organization).sort(byId).map(clone);
    },
  };
  return { rows, store };
}

function directoryStore<T extends { id: string; organization: string }>(): DirectoryStore<T> {
  return directoryRows<T>().store;
}

function teamStore(): TeamStore {
  const { rows, store } = directoryRows<Team>();
  // decision D41: one team name per organization, as the SQL adapters' unique index.
  const taken = (team: Team): boolean => [...rows.values()].some((t) => t.organization === team.organization && t.name === team.name && t.id !== team.id);
  return {
    ...store,
    insert: async (team) => !taken(team) && store.insert(team),
    async replace(team) {
      if (taken(team)) throw new Error(`team name taken in organization ${team.organization}`);
      return store.replace(team);
    },
    async listByMember(organization, userId) {
      return [...rows.values()]
        .filter((t) => t.organization === organization && t.members.includes(userId))
        .sort(byId)
        .map(clone);
    },
  };
}

/**
 * Rows addressed by id and by a unique digest: API tokens and agent tokens share these rules.
 * `touch` never moves `lastUsedAt` backwards, so racing touches keep the latest time.
 */
function digestRows<T extends { id: string; digest: string; lastUsedAt: string | null }>() {
  const rows = new Map<string, T>();
  const digests = new Map<string, string>();
  return {
    rows,
    store: {
      async insert(record: T) {
        if (rows.has(record.id) || digests.has(record.digest)) return false;
        rows.set(record.id, clone(record));
        digests.set(record.digest, record.id);
        return true;
      },
      async get(id: string) {
        const row = rows.get(id);
        return row === undefined ? null : clone(row);
      },
      async findByDigest(digest: string) {
        const id = digests.get(digest);
        const row = id === undefined ? undefined : rows.get(id);
        return row === undefined ? null : clone(row);
      },
      async touch(id: string, at: string) {
        const row = rows.get(id);
        if (!row) return false;
        if (row.lastUsedAt === null || row.lastUsedAt < at) row.lastUsedAt = at;
        return true;
      },
      async delete(id: string) {
        const row = rows.get(id);
        if (!row) return false;
        rows.delete(id);
        digests.delete(row.digest);
        return true;
      },
    },
  };
}

function apiTokenStore(): ApiTokenStore {
  const { rows, store } = digestRows<ApiTokenRecord>();
  return {
    ...store,
    async list(filter, page?: PageRequest): Promise<Page<ApiTokenRecord>> {
      const matches = (r: ApiTokenRecord): boolean =>
        r.organization === filter.organization && (filter.teamId === undefined || (r.kind === "team" && r.teamId === filter.teamId));
      const all = [...rows.values()].filter(matches).sort(byCreation);
      const items = page ? all.slice(page.offset, page.offset + page.limit) : all;
      return { items: items.map(clone), total: all.length };
    },
  };
}

function variableStore(rows: Map<string, VariableRecord>): VariableStore {
  const owns = (owner: VarOwner, r: VariableRecord): boolean => r.ownerKind === owner.kind && r.ownerId === owner.id;
  const keyTaken = (r: VariableRecord): boolean =>
    [...rows.values()].some(
      (o) => o.id !== r.id && o.ownerKind === r.ownerKind && o.ownerId === r.ownerId && o.key === r.key && o.category === r.category,
    );
  return {
    async list(owner, page?: PageRequest): Promise<Page<VariableRecord>> {
      const all = [...rows.values()].filter((r) => owns(owner, r)).sort(byCreation);
      const items = page ? all.slice(page.offset, page.offset + page.limit) : all;
      return { items: items.map(clone), total: all.length };
    },
    async get(owner, id) {
      const row = rows.get(id);
      return row && owns(owner, row) ? clone(row) : null;
    },
    async insert(record) {
      if (rows.has(record.id)) throw new Error("variable id already exists");
      if (keyTaken(record)) return { ok: false, reason: "duplicate-key" };
      rows.set(record.id, clone(record));
      return { ok: true };
    },
    async update(record, expectedVersionId) {
      const row = rows.get(record.id);
      if (!row || row.ownerKind !== record.ownerKind || row.ownerId !== record.ownerId) return { ok: false, reason: "missing" };
      if (row.versionId !== expectedVersionId) return { ok: false, reason: "stale" };
      if (keyTaken(record)) return { ok: false, reason: "duplicate-key" };
      rows.set(record.id, clone(record));
      return { ok: true };
    },
    async delete(owner, id) {
      const row = rows.get(id);
      if (!row || !owns(owner, row)) return false;
      return rows.delete(id);
    },
    async deleteByOwner(owner) {
      let removed = 0;
      for (const [id, row] of rows) if (owns(owner, row) && rows.delete(id)) removed++;
      return removed;
    },
  };
}

function agentTokenStore(): AgentTokenStore {
  const { rows, store } = digestRows<AgentTokenRecord>();
  return {
    ...store,
    async listByPool(agentPoolId, page, order) {
      const all = [...rows.values()].filter((r) => r.agentPoolId === agentPoolId).sort(byCreation);
      if (order === "desc") all.reverse();
      return { items: all.slice(page.offset, page.offset + page.limit).map(clone), total: all.length };
    },
  };
}
