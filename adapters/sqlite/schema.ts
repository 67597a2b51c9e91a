import { assertKnownVersion, migrationFailed } from "../sql/migrations.js";
import type { Migration } from "./migration.js";
import type { SqliteDatabase } from "./driver.js";
import { immediateTx } from "./driver.js";
import { AGENTS_MIGRATION } from "./agents.js";
import { ATTEMPT_AGENTS_MIGRATION, DELIVERY_POOLS_MIGRATION } from "./task-deliveries.js";
import { AUDIT_BY_SEQ_MIGRATION, AUDIT_MIGRATION, AUDIT_ONE_INSERT_MIGRATION } from "./audit.js";
import { RUN_COMMENTS_MIGRATION } from "./comments.js";
import { ATTEMPT_AGENT_NAMES_MIGRATION, DELIVERY_ATTEMPTS_MIGRATION } from "./delivery-attempts.js";
import { HOSTS_MIGRATION } from "./hosts.js";
import { REVISIONS_MIGRATION } from "./revisions.js";
import { DELIVERY_DISPATCH_MIGRATION, DELIVERY_PAYLOADS_MIGRATION, RUN_ARTIFACTS_MIGRATION, RUN_TASK_GLOBAL_CONFIGURATION_MIGRATION, RUN_TASKS_MIGRATION, RUNS_BY_WORKSPACE_MIGRATION } from "./run-task-migration.js";
import { teamOwnersSql } from "../sql/team-owners.js";

export type { Migration } from "./migration.js";

/**
 * The schema, in order. `PRAGMA user_version` holds how many of these a database has applied.
 * Append only: never edit, reorder or remove a released step (a database at version N has run
 * exactly the first N). A later aggregate (team-projects, agent tokens, run tasks, stages,
 * results, outcomes, the delivery outbox) adds one entry at the end of this list.
 *
 * Conventions: STRICT tables; timestamps as ISO-8601 TEXT (they sort as they compare); booleans as
 * INTEGER 0/1 with a CHECK; arrays and free-form maps as JSON TEXT; every list method has an index
 * whose column order serves its WHERE and ORDER BY, so paging never sorts the whole set. No foreign
 * keys between aggregates (the contract lets a record refer to one the store does not hold); only
 * within one (a team's member rows).
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    name: "0001-directory",
    up: `
      CREATE TABLE organizations (
        name TEXT PRIMARY KEY NOT NULL,
        email TEXT
      ) STRICT;

      CREATE TABLE users (
        id TEXT PRIMARY KEY NOT NULL,
        username TEXT NOT NULL,
        email TEXT
      ) STRICT;

      CREATE TABLE projects (
        id TEXT PRIMARY KEY NOT NULL,
        organization TEXT NOT NULL,
        name TEXT NOT NULL
      ) STRICT;
      CREATE INDEX projects_by_organization ON projects (organization, id);

      CREATE TABLE workspaces (
        id TEXT PRIMARY KEY NOT NULL,
        organization TEXT NOT NULL,
        name TEXT NOT NULL,
        project_id TEXT NOT NULL,
        working_directory TEXT NOT NULL,
        vcs_repo_url TEXT,
        vcs_branch TEXT
      ) STRICT;
      CREATE INDEX workspaces_by_organization ON workspaces (organization, id);

      CREATE TABLE teams (
        id TEXT PRIMARY KEY NOT NULL,
        organization TEXT NOT NULL,
        name TEXT NOT NULL,
        visibility TEXT NOT NULL,
        org_permissions TEXT NOT NULL, -- JSON array
        members TEXT NOT NULL          -- JSON array of user ids, as given (order kept)
      ) STRICT;
      CREATE INDEX teams_by_organization ON teams (organization, id);

      -- Query index for teams.listByMember, written in the same transaction as teams.members.
      CREATE TABLE team_members (
        team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        PRIMARY KEY (team_id, user_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX team_members_by_user ON team_members (user_id, team_id);

      CREATE TABLE policy_sets (
        id TEXT PRIMARY KEY NOT NULL,
        organization TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL
      ) STRICT;
      CREATE INDEX policy_sets_by_organization ON policy_sets (organization, id);

      CREATE TABLE agent_pools (
        id TEXT PRIMARY KEY NOT NULL,
        organization TEXT NOT NULL,
        name TEXT NOT NULL
      ) STRICT;
      CREATE INDEX agent_pools_by_organization ON agent_pools (organization, id);
    `,
  },
  {
    name: "0002-api-tokens",
    up: `
      CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY NOT NULL,
        digest TEXT NOT NULL UNIQUE, -- SHA-256 hex of the secret (D11)
        organization TEXT NOT NULL,
        kind TEXT NOT NULL,
        user_id TEXT,
        team_id TEXT,
        description TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT
      ) STRICT;
    `,
  },
  {
    name: "0003-variables",
    up: `
      CREATE TABLE variables (
        id TEXT PRIMARY KEY NOT NULL,
        owner_kind TEXT NOT NULL,
        owner_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL, -- plaintext, or the keyring's sealed string when sensitive (D11)
        description TEXT,
        category TEXT NOT NULL,
        hcl INTEGER NOT NULL CHECK (hcl IN (0, 1)),
        sensitive INTEGER NOT NULL CHECK (sensitive IN (0, 1)),
        version_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
      -- decision D12: one key per category per owner.
      CREATE UNIQUE INDEX variables_unique_key ON variables (owner_kind, owner_id, key, category);
      -- decision D7: list pages walk this index in order.
      CREATE INDEX variables_by_owner ON variables (owner_kind, owner_id, created_at, id);
      -- keyring re-encryption scans sensitive rows by id.
      CREATE INDEX variables_sensitive_by_id ON variables (id) WHERE sensitive = 1;
    `,
  },
  {
    name: "0004-agent-tokens",
    up: `
      CREATE TABLE agent_tokens (
        id TEXT PRIMARY KEY NOT NULL,
        agent_pool_id TEXT NOT NULL,
        organization TEXT NOT NULL,
        description TEXT NOT NULL,
        digest TEXT NOT NULL, -- SHA-256 hex of the token (D11, D22); the token is never stored
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        created_by_type TEXT NOT NULL,
        created_by_id TEXT NOT NULL
      ) STRICT;
      -- decision D22: verify looks a token up by digest; one digest, one token.
      CREATE UNIQUE INDEX agent_tokens_by_digest ON agent_tokens (digest);
      -- decision D7: list pages walk this index, forwards for created-at, backwards for -created-at.
      CREATE INDEX agent_tokens_by_pool ON agent_tokens (agent_pool_id, created_at, id);
    `,
  },
  {
    name: "0005-team-projects",
    up: `
      CREATE TABLE team_projects (
        id TEXT PRIMARY KEY NOT NULL,
        team_id TEXT NOT NULL,
        project_id TEXT NOT NULL,
        organization TEXT NOT NULL,
        access TEXT NOT NULL,
        project_access TEXT NOT NULL,   -- JSON object (D20); implied values for a fixed level
        workspace_access TEXT NOT NULL, -- JSON object (D20); implied values for a fixed level
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL        -- the row's version: strictly later on every update
      ) STRICT;
      -- decision D20: one grant per (team, project); also serves listForTeams and deleteByTeam.
      CREATE UNIQUE INDEX team_projects_unique_pair ON team_projects (team_id, project_id);
      -- decision D7: list pages walk this index in order.
      CREATE INDEX team_projects_by_project ON team_projects (project_id, created_at, id);
    `,
  },
  RUN_TASKS_MIGRATION,
  DELIVERY_DISPATCH_MIGRATION,
  REVISIONS_MIGRATION,
  DELIVERY_PAYLOADS_MIGRATION,
  RUN_ARTIFACTS_MIGRATION,
  RUN_TASK_GLOBAL_CONFIGURATION_MIGRATION,
  RUNS_BY_WORKSPACE_MIGRATION,
  RUN_COMMENTS_MIGRATION,
  DELIVERY_ATTEMPTS_MIGRATION,
  HOSTS_MIGRATION,
  AGENTS_MIGRATION,
  DELIVERY_POOLS_MIGRATION,
  ATTEMPT_AGENTS_MIGRATION,
  AUDIT_MIGRATION,
  // decision D41: the owners flag, one team name per organization.
  { name: "0020-team-owners", up: teamOwnersSql("") },
  ATTEMPT_AGENT_NAMES_MIGRATION,
  AUDIT_ONE_INSERT_MIGRATION,
  AUDIT_BY_SEQ_MIGRATION,
];

/**
 * Brings `db` up to `migrations.length`, one transaction per step. Idempotent, and safe when
 * several processes open the same file at once: each step re-reads `user_version` after taking the
 * write lock, so a step another connection applied meanwhile is skipped. Refuses a database whose
 * version is newer than the list (written by a later runplane), rather than guessing.
 */
export function migrate(db: SqliteDatabase, migrations: readonly Migration[] = MIGRATIONS): void {
  const version = (): number => Number(db.pragma("user_version", { simple: true }));
  const current = version();
  assertKnownVersion("sqlite", current, migrations.length);
  const step = immediateTx(db, (index: number, migration: Migration) => {
    if (version() > index) return;
    if (typeof migration.up === "string") db.exec(migration.up);
    else migration.up(db);
    db.pragma(`user_version = ${index + 1}`);
  });
  migrations.forEach((migration, index) => {
    if (index < current) return;
    try {
      step(index, migration);
    } catch (cause) {
      throw migrationFailed("sqlite", migration, cause);
    }
  });
}

/** The names of the steps `migrate` would apply to `db` (for `runplane migrate --dry-run`); applies nothing. */
export function pendingMigrations(db: SqliteDatabase, migrations: readonly Migration[] = MIGRATIONS): string[] {
  const current = Number(db.pragma("user_version", { simple: true }));
  assertKnownVersion("sqlite", current, migrations.length);
  return migrations.slice(current).map((m) => m.name);
}
