import { createMessageRelay } from "./relay.js";
import { randomUUID } from "node:crypto";
import type { StatusChangeFeed, Storage, StopListening } from "../../src/storage/types.js";
import { importOptional } from "../../src/optional-peer.js";
import { createAgentTokenStore } from "./agent-tokens.js";
import { createAgentStore } from "./agents.js";
import { createCommentStore } from "./comments.js";
import { createAttemptStore } from "./delivery-attempts.js";
import { createApiTokenStore } from "./api-tokens.js";
import { createDirectoryStores } from "./directory.js";
import { createHostStore } from "./hosts.js";
import { boundedPool } from "./bounded-pool.js";
import type { PgPoolLike } from "./driver.js";
import { createRevisionStore } from "./revisions.js";
import { createRunTaskStores } from "./run-tasks.js";
import { createStatusChangeFeed } from "./events.js";
import { createNotificationHub, deliveryWakeups } from "./notify.js";
import { migrate, schemaPrefix } from "./schema.js";
import { createTaskDeliveryStore } from "./task-deliveries.js";
import { createTaskStageStores } from "./task-stages.js";
import { createTeamProjectStore } from "./team-projects.js";
import { createVariableStore } from "./variables.js";
import { createSealedValueStore } from "./sealed-values.js";
import { createPostgresAuditStore } from "./audit.js";
import { withPostgresAudit, type StoreFactory } from "./audited.js";

export type { PgPoolClientLike, PgPoolLike, PgQueryConfig, PgQueryResult } from "./driver.js";
export { PostgresStorageError } from "./driver.js";
export type { StatusChange, StatusChangeFeed, StopListening } from "../../src/storage/types.js";

/** decision D53: the directory stores whose writes record events (a team raised to owners). */
const DIRECTORY_AUDITED = ["organizations", "teams", "projects", "workspaces", "policySets", "agentPools"] as const;

/** A `Storage` on PostgreSQL, with both cross-process members of the contract (decision D27). */
export interface PostgresStorage extends Storage {
  /**
   * Calls `onWake` whenever any process sharing the database made deliveries of this schema
   * claimable (a stage start, a retry, a released lease; decision D27): a hint to claim now
   * rather than at the next poll, never a replacement for polling. Shares the storage's one
   * `LISTEN` connection (held while anything listens); when that connection is lost it reconnects
   * and calls `onWake` once. Resolves once listening; rejects when no connection can be made.
   */
  listen(onWake: () => void): Promise<StopListening>;
  /**
   * Stage and result status changes that other storage instances (other processes, or other
   * `createPostgresStorage` calls) stored in this schema, sent by triggers as `NOTIFY
   * runplane_events` inside the writing transaction; this instance's own changes are left out.
   * Shares the `LISTEN` connection of `listen`; changes sent while it reconnects are lost.
   */
  readonly changes: StatusChangeFeed;
}

export interface PostgresStorageOptions {
  /**
   * The schema holding runplane's tables, created when missing (default `public`). Every statement
   * names it, so the connections' `search_path` never matters and one database can hold several
   * runplane instances side by side. A lower-case identifier.
   */
  schema?: string;
  /**
   * How long one storage operation (the wait for a connection and every statement of one
   * transaction or autocommit statement, together) may take before the storage counts as
   * unavailable (decision D28: the API answers 503 with Retry-After, `health()` says so), so a
   * database that goes silent never hangs requests. A write answered so is not applied (decision
   * D39: the server's own `statement_timeout`/`lock_timeout`, or a confirmed cancel). Default 5000;
   * 0 leaves it to the pool's own options. Set the pool's `connectionTimeoutMillis`, `keepAlive`
   * and `idleTimeoutMillis` too.
   */
  timeoutMs?: number;
}

/**
 * A `Storage` on PostgreSQL through node-postgres: a host's `pg.Pool` (typed structurally), or a
 * connection string for which the adapter creates its own pool (`pg` is an optional peer
 * dependency, loaded only then). Several processes may share one database (decision D27): every
 * guarded primitive holds across them, delivery claims use `FOR UPDATE SKIP LOCKED`, writes that
 * make deliveries claimable send `NOTIFY runplane_deliveries` (see `listen`), and status changes
 * send `NOTIFY runplane_events` (see `changes`).
 *
 * It applies pending migrations first, each in its own transaction under an advisory lock, so
 * processes starting together apply each step once. It adds an `error` listener to the pool, so a
 * connection the server drops while idle never crashes the host. `close()` ends the pool only when
 * the adapter created it; a host's pool stays open (and loses only the adapter's listener).
 *
 * @throws when `schema` is not a plain identifier, `pg` is missing for a URL, a migration fails
 *   (it is rolled back), or the database was migrated by a newer runplane.
 */
export async function createPostgresStorage(poolOrUrl: PgPoolLike | string, options: PostgresStorageOptions = {}): Promise<PostgresStorage> {
  const schema = options.schema ?? "public";
  const q = schemaPrefix(schema);
  const owned = typeof poolOrUrl === "string";
  const given = owned ? await openPool(poolOrUrl, options.timeoutMs) : poolOrUrl;
  const onError = (error: Error): void => {
    // The pool has already dropped the connection and opens a new one on demand. Only the
    // SQLSTATE (or error name) is logged: a message may quote connection details.
    const code = (error as { code?: unknown }).code;
    console.warn(`runplane postgres: an idle connection failed (${typeof code === "string" ? code : error.name}); the pool replaces it`);
  };
  given.on("error", onError);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    await migrate(boundedPool(given, timeoutMs, { statements: false }), schema);
  } catch (error) {
    if (owned) await given.end().catch(() => undefined);
    given.removeListener("error", onError);
    throw error;
  }
  // After the migrations, which may take longer than one statement should.
  const pool = boundedPool(given, timeoutMs);

  // Tells this instance's own status changes from other instances' (events.ts).
  const origin = randomUUID();
  const taskDeliveries = createTaskDeliveryStore(pool, schema, q, origin);
  // The listening connection is checked out: close() hands it back before ending the pool.
  const hub = createNotificationHub(pool);
  let closed = false;
  // decision D53: the stores whose writes record audit events, built again over one transaction per audited write.
  const factories: Record<string, StoreFactory> = {
    variables: (p) => createVariableStore(p, q) as never,
    teamProjects: (p) => createTeamProjectStore(p, q) as never,
    apiTokens: (p) => createApiTokenStore(p, q) as never,
    agentTokens: (p) => createAgentTokenStore(p, q) as never,
    agents: (p) => createAgentStore(p, q) as never,
    runTasks: (p) => createRunTaskStores(p, q).runTasks as never,
    workspaceTasks: (p) => createRunTaskStores(p, q).workspaceTasks as never,
    taskStages: (p) => createTaskStageStores(p, q, schema, origin).taskStages as never,
    sealedValues: (p) => createSealedValueStore(p, q) as never,
    ...Object.fromEntries(DIRECTORY_AUDITED.map((name) => [name, (p: PgPoolLike) => createDirectoryStores(p, q)[name] as never])),
  };
  return withPostgresAudit({
    ...createDirectoryStores(pool, q),
    apiTokens: createApiTokenStore(pool, q),
    variables: createVariableStore(pool, q),
    sealedValues: createSealedValueStore(pool, q),
    agentTokens: createAgentTokenStore(pool, q),
    agents: createAgentStore(pool, q),
    teamProjects: createTeamProjectStore(pool, q),
    comments: createCommentStore(pool, q),
    hosts: createHostStore(pool, q),
    deliveryAttempts: createAttemptStore(pool, q),
    ...createRunTaskStores(pool, q),
    ...createTaskStageStores(pool, q, schema, origin),
    taskDeliveries,
    revisions: createRevisionStore(pool, q),
    audit: createPostgresAuditStore(pool, q),
    listen: (onWake) => hub.subscribe(deliveryWakeups(schema, onWake)),
    changes: createStatusChangeFeed(hub, schema, origin),
    relay: createMessageRelay(pool, hub, schema, origin),
    ping: async () => void (await pool.query({ text: "SELECT 1" })),
    async close() {
      if (closed) return;
      closed = true;
      await hub.close();
      if (owned) await pool.end();
      pool.removeListener("error", onError);
    },
  }, pool, q, factories);
}

const DEFAULT_TIMEOUT_MS = 5_000;

/** The pool options a silent database needs (decision D28), for the pool the adapter opens itself. */
export const SILENT_DATABASE_POOL_OPTIONS = {
  connectionTimeoutMillis: DEFAULT_TIMEOUT_MS,
  idleTimeoutMillis: 30_000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
} as const;

async function openPool(connectionString: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<PgPoolLike> {
  const { Pool } = (await importOptional(() => import("pg"), "pg", "createPostgresStorage with a connection URL")).default;
  return new Pool({ connectionString, ...SILENT_DATABASE_POOL_OPTIONS, ...(timeoutMs > 0 ? { connectionTimeoutMillis: timeoutMs } : {}) });
}
