import type { AgentStore } from "./agents-types.js";
import type { AuditStore } from "./audit-types.js";
import type { CommentStore } from "./comments-types.js";
import type { GuardedResult } from "./guarded.js";
import type { DeliveryAttemptStore } from "./attempts-types.js";
import type { HostStore } from "./hosts-types.js";
import type { MessageRelay, StatusChangeFeed, StopListening } from "./notifications.js";
import type { RevisionStore } from "./revisions.js";
import type { SealedValueStore } from "./sealed-values.js";
import type { AgentPool, Organization, PolicySet, Project, Team, User, Workspace } from "../schemas/directory.js";
import type { ApiTokenRecord, Page, PageRequest, VariableRecord, VarOwner } from "../schemas/records.js";
import type { TeamProjectRecord } from "../schemas/team-projects.js";
import type { AgentTokenRecord } from "../schemas/records.js";
import type {
  RunStore,
  RunTaskStore,
  TaskDeliveryStore,
  TaskResultOutcomeStore,
  TaskResultStore,
  TaskStageStore,
  WorkspaceTaskStore,
} from "./run-tasks-types.js";

/**
 * The Storage contract. Every adapter (memory, SQLite, later Postgres) implements it and passes the
 * one conformance suite (`test/conformance`). Rules that hold for every method:
 *
 * - Every method is async and resolves `null` (or `false`) for "not found"; it never throws for it.
 * - Records go in and come out unchanged: the adapter adds no ids, timestamps or defaults and never
 *   interprets a value (sealed values and digests are opaque strings).
 * - A write that reports success is durable when the promise resolves: a reopened store reads it.
 * - Guarded primitives (`insert` with a uniqueness rule, `update` with an expected version, ...) check
 *   and write in one atomic step: of two racing calls whose guards conflict, exactly one succeeds.
 * - List methods page in the store (never load the whole set to slice it) and order
 *   deterministically: by `createdAt`, then `id`, unless a method says otherwise.
 * - An adapter never logs record contents.
 * - A database that cannot be reached right now (connection refused, reset or terminated, a pool or
 *   lock timeout) rejects with `StorageUnavailableError` (`./unavailable.ts`, exported by `runplane`;
 *   decision D28), which the API answers 503 with `Retry-After`; any other throw is a fault (500).
 * - `PageRequest` arrives validated by the core: `offset >= 0` and `1 <= limit <= 100`.
 * - Ids and keys compare by exact code units (case-sensitive; a future Postgres adapter uses
 *   `COLLATE "C"`), so ordering by id is plain code-unit order.
 */
export interface Storage {
  readonly organizations: OrganizationStore;
  readonly projects: DirectoryStore<Project>;
  readonly workspaces: DirectoryStore<Workspace>;
  readonly teams: TeamStore;
  readonly users: UserStore;
  readonly policySets: DirectoryStore<PolicySet>;
  readonly agentPools: DirectoryStore<AgentPool>;
  readonly apiTokens: ApiTokenStore;
  readonly variables: VariableStore;
  readonly agentTokens: AgentTokenStore;
  /** The agents of agent pools, their status and latest report (`./agents-types.ts`, decision D34). */
  readonly agents: AgentStore;
  /** Run tasks, stages, results, outcomes and the delivery outbox (`./run-tasks-types.ts`). */
  readonly runTasks: RunTaskStore;
  readonly workspaceTasks: WorkspaceTaskStore;
  readonly runs: RunStore;
  readonly taskStages: TaskStageStore;
  readonly taskResults: TaskResultStore;
  readonly taskResultOutcomes: TaskResultOutcomeStore;
  /** The delivery outbox; its `stats` (metrics and health checks) is optional (`./outbox-types.ts`). */
  readonly taskDeliveries: TaskDeliveryStore;
  readonly teamProjects: TeamProjectStore;
  /** Delivery attempts, the newest 20 per result (`./attempts-types.ts`, decision D31). */
  readonly deliveryAttempts: DeliveryAttemptStore;
  /** Every sealed value by kind (`./sealed-values.ts`, decision D29): what `reencrypt` re-seals. */
  readonly sealedValues: SealedValueStore;
  /** Comments on runs (`./comments-types.ts`). */
  readonly comments: CommentStore;
  /** The hosts using this storage, their keys and last beat (`./hosts-types.ts`, decision D29a). */
  readonly hosts: HostStore;
  /**
   * The audit trail (`./audit-types.ts`, decision D53). Optional for a custom adapter: without it
   * nothing is recorded and the audit route answers 404. Every bundled adapter has it.
   */
  readonly audit?: AuditStore;
  /** Optional change counters (`./revisions.ts`): a repeated read answered from memory after one counter read. */
  readonly revisions?: RevisionStore;
  /**
   * Optional delivery wake-ups across processes (decision D27). Calls `onWake` soon after any
   * process sharing the storage committed a write that made deliveries claimable (a stage start's
   * new rows, a retry, a released lease), and once more after every reconnect of the underlying
   * subscription, since wake-ups sent meanwhile were lost. A hint only: a dispatcher still polls,
   * and a wake-up may come when nothing is due. Resolves once listening, with a function that
   * stops it; rejects when it cannot listen (nothing stays subscribed then). `createDispatcher`
   * subscribes in `start()` and stops in `stop()`. Adapters for one process (memory, SQLite)
   * leave it out: the dispatcher hears its own instance's stage starts through `runTasks.on`.
   */
  listen?(onWake: () => void): Promise<StopListening>;
  /**
   * Optional status changes of other processes sharing the storage (`./notifications.ts`), so
   * `runTasks.on(...)` hears every stage and result change once per process, whichever process
   * made it. Adapters for one process (memory, SQLite) leave it out: every change is made by the
   * one instance, which emits it itself.
   */
  readonly changes?: StatusChangeFeed;
  /**
   * Optional short messages to the other processes sharing the storage (`./notifications.ts`,
   * decision D34: a pool task's verification through an agent of another host). Adapters for one
   * process (memory, SQLite) leave it out.
   */
  readonly relay?: MessageRelay;
  /**
   * Optional: why this storage knows its writes cannot succeed (the SQLite writer thread stopped,
   * D37), or null; `health()` reports it at once. Never a host, a statement or a value.
   */
  writesUnavailable?(): string | null;
  /** Resolves once the database answers a statement reading no table: `health()` tells busy from unreachable (D28). */
  ping?(): Promise<void>;
  /** Releases the underlying resources. Calls after close may throw. */
  close(): Promise<void>;
}

export type { GuardedResult } from "./guarded.js";

/** Organizations are addressed by their unique `name`. */
export interface OrganizationStore {
  get(name: string): Promise<Organization | null>;
  /** Inserts; `false` (and no change) when the name is taken. */
  insert(record: Organization): Promise<boolean>;
  /** Replaces the record of the same name; `false` when there is none. */
  replace(record: Organization): Promise<boolean>;
  /** Removes; `false` when there was none. */
  delete(name: string): Promise<boolean>;
  /** Every name, sorted. Optional: without it `audit verify` cannot tell a trail deleted whole (D53). */
  names?(): Promise<string[]>;
}

/** A directory aggregate owned by an organization, addressed by `id`. */
export interface DirectoryStore<T extends { id: string; organization: string }> {
  get(id: string): Promise<T | null>;
  /** Inserts; `false` (and no change) when the id is taken. */
  insert(record: T): Promise<boolean>;
  /** Replaces the record with the same id; `false` when there is none. */
  replace(record: T): Promise<boolean>;
  /** Removes; `false` when there was none. */
  delete(id: string): Promise<boolean>;
  /** Every record of one organization, ordered by `id`. */
  listByOrganization(organization: string): Promise<T[]>;
}

export interface TeamStore extends DirectoryStore<Team> {
  /** Teams of `organization` whose `members` contain `userId`, ordered by `id`. */
  listByMember(organization: string, userId: string): Promise<Team[]>;
}

/** Users are global (not owned by an organization). */
export interface UserStore {
  get(id: string): Promise<User | null>;
  insert(record: User): Promise<boolean>;
  replace(record: User): Promise<boolean>;
  delete(id: string): Promise<boolean>;
}

export interface ApiTokenStore {
  /** Inserts; `false` when the id or the digest already exists. */
  insert(record: ApiTokenRecord): Promise<boolean>;
  get(id: string): Promise<ApiTokenRecord | null>;
  /** The token whose digest equals `digest`, or null. */
  findByDigest(digest: string): Promise<ApiTokenRecord | null>;
  /**
   * Raises `lastUsedAt` to `at` unless it already holds a later instant (racing touches keep the
   * latest); `false` when the token no longer exists.
   */
  touch(id: string, at: string): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  /**
   * The tokens of `filter.organization` (of every kind), or only those of team `filter.teamId`,
   * ordered by `createdAt`, then `id`, and their total; every one when `page` is omitted. Another
   * organization's tokens are never listed, whatever the team id. A deleted token is listed no more.
   * Records come whole (digests included): the core decides what leaves it (the adapter masks nothing).
   */
  list(filter: ApiTokenListFilter, page?: PageRequest): Promise<Page<ApiTokenRecord>>;
}

/** Which API tokens `ApiTokenStore.list` returns. */
export interface ApiTokenListFilter {
  organization: string;
  /** Only tokens of this team (`kind: "team"`); absent: every token of the organization. */
  teamId?: string;
}

/**
 * Workspace variables and policy set parameters share one aggregate (both are `vars`), told apart
 * by their owner. `(owner, key, category)` is unique (decision D12).
 */
export interface VariableStore {
  /** Variables of one owner ordered by `createdAt`, then `id`; every one when `page` is omitted. */
  list(owner: VarOwner, page?: PageRequest): Promise<Page<VariableRecord>>;
  /** The variable with this id when it belongs to `owner`; null otherwise (another owner's id too). */
  get(owner: VarOwner, id: string): Promise<VariableRecord | null>;
  /**
   * Inserts unless `(owner, key, category)` is taken (`duplicate-key`), checked atomically. Ids are
   * fresh from the core; inserting an id that exists is a programming error: the adapter throws and
   * the stored row is untouched.
   */
  insert(record: VariableRecord): Promise<GuardedResult<"duplicate-key">>;
  /**
   * Replaces the stored row with `record` (same id and owner) only while its `versionId` still
   * equals `expectedVersionId`: `missing` when the row is gone, `stale` when another update won,
   * `duplicate-key` when the new `(key, category)` is taken by another row of the owner. A `record`
   * naming another owner than the stored row is `missing` and changes nothing.
   */
  update(record: VariableRecord, expectedVersionId: string): Promise<GuardedResult<"missing" | "stale" | "duplicate-key">>;
  /** Removes one variable of `owner`; `false` when it does not exist there. */
  delete(owner: VarOwner, id: string): Promise<boolean>;
  /** Removes every variable of `owner`; resolves the number removed. */
  deleteByOwner(owner: VarOwner): Promise<number>;
}

/** Order of an agent token list: by `createdAt`, ties broken by `id` in the same direction. */
export type AgentTokenOrder = "asc" | "desc";

/**
 * Agent pool authentication tokens (decision D22). The id and the digest are each unique. Timestamps
 * are the core's fixed-width UTC ISO-8601 strings, so comparing them as strings compares instants.
 */
export interface AgentTokenStore {
  /** Inserts; `false` (and no change) when the id or the digest already exists, checked atomically. */
  insert(record: AgentTokenRecord): Promise<boolean>;
  get(id: string): Promise<AgentTokenRecord | null>;
  /**
   * One page of the tokens of `agentPoolId` and the pool's total. `asc` orders by `createdAt`, then
   * `id`; `desc` is exactly the reverse (`createdAt` descending, then `id` descending), so the two
   * orders list the same tokens back to front.
   */
  listByPool(agentPoolId: string, page: PageRequest, order: AgentTokenOrder): Promise<Page<AgentTokenRecord>>;
  /** The token whose digest equals `digest` exactly, or null. */
  findByDigest(digest: string): Promise<AgentTokenRecord | null>;
  /**
   * Raises `lastUsedAt` to `at` unless it already holds a later instant (racing touches keep the
   * latest, never move it back); nothing else changes. `false` when the token does not exist, and
   * a touch never recreates a deleted token.
   */
  touch(id: string, at: string): Promise<boolean>;
  /** Removes; `false` when there was none. Its id and digest are then found no more. */
  delete(id: string): Promise<boolean>;
}

/** Visibility and query filters of a team-project list. */
export interface TeamProjectListFilter {
  /** Only grants of these teams (the caller's visibility); `[]` matches nothing. Absent: every team. */
  teamIds?: readonly string[];
  /** Only grants of this team (`filter[team][id]`). Combines with `teamIds` (both must hold). */
  teamId?: string;
}

/**
 * Team access to projects (spec 2.6, decisions D19-D21). `(teamId, projectId)` is unique: one grant per
 * team and project (D20). `teamId`, `projectId`, `organization`, `id` and `createdAt` never change
 * after insert. `updatedAt` is the row's version: the core writes a strictly later `updatedAt` on
 * every update, so comparing it is a compare-and-set without an ABA problem.
 */
export interface TeamProjectStore {
  /**
   * Inserts unless `(teamId, projectId)` is taken (`duplicate`), checked atomically. Ids are fresh
   * from the core; inserting an id that exists is a programming error: the adapter throws and the
   * stored row is untouched.
   */
  insert(record: TeamProjectRecord): Promise<GuardedResult<"duplicate">>;
  get(id: string): Promise<TeamProjectRecord | null>;
  /**
   * One page of the grants of `projectId` that pass `filter`, ordered by `createdAt`, then `id`, and
   * the number of grants passing the filter (`total`, whatever the page).
   */
  listByProject(projectId: string, filter: TeamProjectListFilter, page: PageRequest): Promise<Page<TeamProjectRecord>>;
  /**
   * Every grant of `projectId` held by one of `teamIds` (at most one per team), ordered by
   * `createdAt`, then `id`; `[]` for no teams. What the permission resolver reads for one principal.
   */
  listForTeams(projectId: string, teamIds: readonly string[]): Promise<TeamProjectRecord[]>;
  /**
   * Replaces the stored row with `record` only while its `updatedAt` still equals
   * `expectedUpdatedAt`: `missing` when the row is gone (or `record` names another team, project or
   * organization than the row), `stale` when another update won. Nothing is written on a refusal.
   */
  update(record: TeamProjectRecord, expectedUpdatedAt: string): Promise<GuardedResult<"missing" | "stale">>;
  /** Removes; `false` when there was none. Its `(teamId, projectId)` pair is free again. */
  delete(id: string): Promise<boolean>;
  /** Removes every grant of a team (the team left the directory); resolves the number removed. */
  deleteByTeam(teamId: string): Promise<number>;
  /** Removes every grant on a project (the project left the directory); resolves the number removed. */
  deleteByProject(projectId: string): Promise<number>;
}

export type * from "./run-tasks-types.js";
export type * from "./comments-types.js";
export type * from "./attempts-types.js";
export type * from "./hosts-types.js";
export type * from "./agents-types.js";
export type { AgentRecord, AgentStatus } from "../schemas/agents.js";
export type { HostRecord } from "../schemas/hosts.js";
export type { RevisionStore } from "./revisions.js";
export type { SealedColumn, SealedValue, SealedValueScan, SealedValueStore } from "./sealed-values.js";
export type { MessageRelay, ResultStatusChange, StageStatusChange, StatusChange, StatusChangeFeed, StopListening } from "./notifications.js";
