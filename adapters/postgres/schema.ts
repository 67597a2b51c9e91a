import { assertKnownVersion, migrationFailed } from "../sql/migrations.js";
import type { PgMigration } from "./migration.js";
import type { PgPoolLike, Queryable } from "./driver.js";
import { transaction } from "./driver.js";
import { AGENTS_MIGRATION } from "./agents.js";
import { ATTEMPT_AGENTS_MIGRATION, DELIVERY_POOLS_MIGRATION } from "./task-deliveries.js";
import { AUDIT_BY_SEQ_MIGRATION, AUDIT_MIGRATION, AUDIT_ONE_INSERT_MIGRATION } from "./audit.js";
import { AUDIT_APPEND_FUNCTION_MIGRATION } from "./audit-many.js";
import { teamOwnersSql } from "../sql/team-owners.js";
import { RUN_COMMENTS_MIGRATION } from "./comments.js";
import { ATTEMPT_AGENT_NAMES_MIGRATION, DELIVERY_ATTEMPTS_MIGRATION } from "./delivery-attempts.js";
import { HOSTS_MIGRATION } from "./hosts.js";
import { STATUS_EVENTS_MIGRATION } from "./events.js";
import { REVISIONS_MIGRATION } from "./revisions.js";
import { OUTBOX_HOT_UPDATES_MIGRATION, RUN_ARTIFACTS_MIGRATION, RUN_TASK_GLOBAL_CONFIGURATION_MIGRATION, RUN_TASKS_MIGRATION, RUNS_BY_WORKSPACE_MIGRATION } from "./run-task-migration.js";
import { TEXT } from "./sql.js";

export type { PgMigration } from "./migration.js";

/**
 * Booleans are `integer` 0/1 and JSON is text, exactly as in SQLite, so both adapters share the
 * row mappers (`adapters/sql/`) and JSON keeps its key order (outcome tags).
 */
const DIRECTORY_MIGRATION: PgMigration = {
  name: "0001-directory",
  up: (q) => `
    CREATE TABLE ${q}organizations (name ${TEXT} PRIMARY KEY, email ${TEXT});
    CREATE TABLE ${q}users (id ${TEXT} PRIMARY KEY, username ${TEXT} NOT NULL, email ${TEXT});
    CREATE TABLE ${q}projects (id ${TEXT} PRIMARY KEY, organization ${TEXT} NOT NULL, name ${TEXT} NOT NULL);
    CREATE INDEX projects_by_organization ON ${q}projects (organization, id);
    CREATE TABLE ${q}workspaces (
      id ${TEXT} PRIMARY KEY, organization ${TEXT} NOT NULL, name ${TEXT} NOT NULL, project_id ${TEXT} NOT NULL,
      working_directory ${TEXT} NOT NULL, vcs_repo_url ${TEXT}, vcs_branch ${TEXT});
    CREATE INDEX workspaces_by_organization ON ${q}workspaces (organization, id);
    CREATE TABLE ${q}teams (
      id ${TEXT} PRIMARY KEY, organization ${TEXT} NOT NULL, name ${TEXT} NOT NULL, visibility ${TEXT} NOT NULL,
      org_permissions ${TEXT} NOT NULL, -- JSON array
      members ${TEXT} NOT NULL);        -- JSON array of user ids, as given (order kept)
    CREATE INDEX teams_by_organization ON ${q}teams (organization, id);
    -- Query index for teams.listByMember, written in the same transaction as teams.members.
    CREATE TABLE ${q}team_members (
      team_id ${TEXT} NOT NULL REFERENCES ${q}teams (id) ON DELETE CASCADE,
      user_id ${TEXT} NOT NULL,
      PRIMARY KEY (team_id, user_id));
    CREATE INDEX team_members_by_user ON ${q}team_members (user_id, team_id);
    CREATE TABLE ${q}policy_sets (id ${TEXT} PRIMARY KEY, organization ${TEXT} NOT NULL, name ${TEXT} NOT NULL, kind ${TEXT} NOT NULL);
    CREATE INDEX policy_sets_by_organization ON ${q}policy_sets (organization, id);
    CREATE TABLE ${q}agent_pools (id ${TEXT} PRIMARY KEY, organization ${TEXT} NOT NULL, name ${TEXT} NOT NULL);
    CREATE INDEX agent_pools_by_organization ON ${q}agent_pools (organization, id);
    CREATE TABLE ${q}team_projects (
      id ${TEXT} PRIMARY KEY, team_id ${TEXT} NOT NULL, project_id ${TEXT} NOT NULL, organization ${TEXT} NOT NULL,
      access ${TEXT} NOT NULL,
      project_access ${TEXT} NOT NULL,   -- JSON object (D20)
      workspace_access ${TEXT} NOT NULL, -- JSON object (D20)
      created_at ${TEXT} NOT NULL,
      updated_at ${TEXT} NOT NULL);      -- the row's version: strictly later on every update
    -- decision D20: one grant per (team, project); also serves listForTeams and deleteByTeam.
    CREATE UNIQUE INDEX team_projects_unique_pair ON ${q}team_projects (team_id, project_id);
    CREATE INDEX team_projects_by_project ON ${q}team_projects (project_id, created_at, id);
  `,
};

const CREDENTIALS_MIGRATION: PgMigration = {
  name: "0002-credentials-and-variables",
  up: (q) => `
    CREATE TABLE ${q}api_tokens (
      id ${TEXT} PRIMARY KEY,
      digest ${TEXT} NOT NULL CONSTRAINT api_tokens_unique_digest UNIQUE, -- SHA-256 hex of the secret (D11)
      organization ${TEXT} NOT NULL, kind ${TEXT} NOT NULL, user_id ${TEXT}, team_id ${TEXT},
      description ${TEXT} NOT NULL, created_at ${TEXT} NOT NULL, last_used_at ${TEXT});
    CREATE TABLE ${q}agent_tokens (
      id ${TEXT} PRIMARY KEY, agent_pool_id ${TEXT} NOT NULL, organization ${TEXT} NOT NULL,
      description ${TEXT} NOT NULL,
      digest ${TEXT} NOT NULL, -- SHA-256 hex of the token (D11, D22); the token is never stored
      created_at ${TEXT} NOT NULL, last_used_at ${TEXT},
      created_by_type ${TEXT} NOT NULL, created_by_id ${TEXT} NOT NULL);
    CREATE UNIQUE INDEX agent_tokens_by_digest ON ${q}agent_tokens (digest);
    CREATE INDEX agent_tokens_by_pool ON ${q}agent_tokens (agent_pool_id, created_at, id);
    CREATE TABLE ${q}variables (
      id ${TEXT} PRIMARY KEY, owner_kind ${TEXT} NOT NULL, owner_id ${TEXT} NOT NULL, key ${TEXT} NOT NULL,
      value ${TEXT} NOT NULL, -- plaintext, or the keyring's sealed string when sensitive (D11)
      description ${TEXT}, category ${TEXT} NOT NULL,
      hcl integer NOT NULL CHECK (hcl IN (0, 1)),
      sensitive integer NOT NULL CHECK (sensitive IN (0, 1)),
      version_id ${TEXT} NOT NULL, created_at ${TEXT} NOT NULL, updated_at ${TEXT} NOT NULL);
    -- decision D12: one key per category per owner.
    CREATE UNIQUE INDEX variables_unique_key ON ${q}variables (owner_kind, owner_id, key, category);
    CREATE INDEX variables_by_owner ON ${q}variables (owner_kind, owner_id, created_at, id);
    CREATE INDEX variables_sensitive_by_id ON ${q}variables (id) WHERE sensitive = 1;
  `,
};

/**
 * The schema, in order; `runplane_schema_version` holds one row per applied step. Append only:
 * never edit, reorder or remove a released step.
 */
export const MIGRATIONS: readonly PgMigration[] = [
  DIRECTORY_MIGRATION,
  CREDENTIALS_MIGRATION,
  RUN_TASKS_MIGRATION,
  REVISIONS_MIGRATION,
  STATUS_EVENTS_MIGRATION,
  RUN_ARTIFACTS_MIGRATION,
  RUN_TASK_GLOBAL_CONFIGURATION_MIGRATION,
  RUNS_BY_WORKSPACE_MIGRATION,
  OUTBOX_HOT_UPDATES_MIGRATION,
  RUN_COMMENTS_MIGRATION,
  DELIVERY_ATTEMPTS_MIGRATION,
  HOSTS_MIGRATION,
  AGENTS_MIGRATION,
  DELIVERY_POOLS_MIGRATION,
  ATTEMPT_AGENTS_MIGRATION,
  AUDIT_MIGRATION,
  // decision D41: the owners flag, one team name per organization.
  // The revision triggers are deferred to COMMIT: made immediate, so the index can be built after the UPDATEs.
  { name: "0017-team-owners", up: (q) => `SET CONSTRAINTS ALL IMMEDIATE; ${teamOwnersSql(q)}` },
  ATTEMPT_AGENT_NAMES_MIGRATION,
  AUDIT_ONE_INSERT_MIGRATION,
  AUDIT_BY_SEQ_MIGRATION,
  AUDIT_APPEND_FUNCTION_MIGRATION,
];

/** Every runplane process takes this transaction-scoped lock to migrate ("runplane" in ASCII). */
export const MIGRATION_LOCK_KEY = "8247625214993841765";

/** `"name".`, for a schema name checked to be a plain identifier (it ends up inside SQL text). */
export function schemaPrefix(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new TypeError("createPostgresStorage: schema must be a lower-case identifier ([a-z_][a-z0-9_]*, at most 63 characters)");
  }
  return `"${schema}".`;
}

/**
 * Brings `schema` up to `migrations.length`. Each step is its own transaction under
 * `pg_advisory_xact_lock`, re-reading the version after taking it, so processes starting together
 * apply every step exactly once and the others wait and skip. Refuses a database that a newer
 * runplane migrated further, rather than guessing what its tables mean.
 */
export async function migrate(pool: PgPoolLike, schema: string, migrations: readonly PgMigration[] = MIGRATIONS): Promise<void> {
  const q = schemaPrefix(schema);
  for (;;) {
    const done = await transaction(pool, async (client) => {
      await client.query({ text: `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})` });
      const current = await versionOf(client, schema, q);
      assertKnownVersion("postgres", current, migrations.length);
      const next = migrations[current];
      if (!next) return true;
      try {
        await client.query({ text: next.up(q) });
      } catch (cause) {
        throw migrationFailed("postgres", next, cause);
      }
      await client.query({
        text: `INSERT INTO ${q}runplane_schema_version (version, name) VALUES ($1, $2)`,
        values: [current + 1, next.name],
      });
      return false;
    });
    if (done) return;
  }
}

/** The applied version, creating the schema and the version table first when they are missing. */
async function versionOf(client: Queryable, schema: string, q: string): Promise<number> {
  // Looked up before creating: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when
  // the schema exists, and a host may have created it for a role that lacks it.
  const found = await client.query({
    text: `SELECT to_regnamespace($1) IS NOT NULL AS schema, to_regclass($2) IS NOT NULL AS versions`,
    values: [`"${schema}"`, `${q}runplane_schema_version`],
  });
  const { schema: hasSchema, versions: hasVersions } = found.rows[0] as { schema: boolean; versions: boolean };
  if (!hasSchema) await client.query({ text: `CREATE SCHEMA ${q.slice(0, -1)}` });
  if (!hasVersions) {
    await client.query({
      text: `CREATE TABLE ${q}runplane_schema_version (
        version integer PRIMARY KEY, name ${TEXT} NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    });
  }
  const result = await client.query({ text: `SELECT coalesce(max(version), 0)::int AS version FROM ${q}runplane_schema_version` });
  return (result.rows[0] as { version: number }).version;
}

/** The names of the steps `migrate` would apply to `schema` (for `runplane migrate --dry-run`); creates and applies nothing. */
export async function pendingMigrations(pool: PgPoolLike, schema: string, migrations: readonly PgMigration[] = MIGRATIONS): Promise<string[]> {
  const q = schemaPrefix(schema);
  const found = await pool.query({ text: `SELECT to_regclass($1) IS NOT NULL AS versions`, values: [`${q}runplane_schema_version`] });
  let current = 0;
  if ((found.rows[0] as { versions: boolean }).versions) {
    const result = await pool.query({ text: `SELECT coalesce(max(version), 0)::int AS version FROM ${q}runplane_schema_version` });
    current = (result.rows[0] as { version: number }).version;
  }
  assertKnownVersion("postgres", current, migrations.length);
  return migrations.slice(current).map((m) => m.name);
}
