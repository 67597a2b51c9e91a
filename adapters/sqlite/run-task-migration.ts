import type { Migration } from "./migration.js";

/**
 * The run task tables (decisions D13, D15-D18), appended to `MIGRATIONS` in schema.ts. Kept here so
 * the shared schema file changes by one line; like every released step it is never edited.
 */
export const RUN_TASKS_MIGRATION: Migration = {
  name: "0006-run-tasks",
  up: `
    CREATE TABLE run_tasks (
      id TEXT PRIMARY KEY NOT NULL,
      organization TEXT NOT NULL,
      name TEXT NOT NULL,
      url TEXT NOT NULL,
      description TEXT,
      category TEXT NOT NULL,
      enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
      hmac_key TEXT, -- the keyring's sealed string (D11), never plaintext
      version INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    ) STRICT;
    CREATE UNIQUE INDEX run_tasks_unique_name ON run_tasks (organization, name);
    CREATE INDEX run_tasks_by_organization ON run_tasks (organization, created_at, id);
    CREATE INDEX run_tasks_sealed_by_id ON run_tasks (id) WHERE hmac_key IS NOT NULL;

    CREATE TABLE workspace_tasks (
      id TEXT PRIMARY KEY NOT NULL,
      workspace_id TEXT NOT NULL,
      organization TEXT NOT NULL,
      task_id TEXT NOT NULL,
      enforcement_level TEXT NOT NULL,
      stages TEXT NOT NULL, -- JSON array
      version INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    ) STRICT;
    CREATE UNIQUE INDEX workspace_tasks_unique_task ON workspace_tasks (workspace_id, task_id);
    CREATE INDEX workspace_tasks_by_workspace ON workspace_tasks (workspace_id, created_at, id);
    CREATE INDEX workspace_tasks_by_task ON workspace_tasks (task_id);

    CREATE TABLE runs (
      id TEXT PRIMARY KEY NOT NULL,
      organization TEXT NOT NULL,
      workspace_id TEXT NOT NULL,
      message TEXT NOT NULL,
      created_by TEXT NOT NULL,
      created_at TEXT NOT NULL,
      is_speculative INTEGER NOT NULL CHECK (is_speculative IN (0, 1)),
      configuration_version_id TEXT NOT NULL,
      configuration_version_downloadable INTEGER NOT NULL CHECK (configuration_version_downloadable IN (0, 1)),
      plan_id TEXT NOT NULL,
      vcs TEXT -- JSON object or NULL
    ) STRICT;

    CREATE TABLE task_stages (
      id TEXT PRIMARY KEY NOT NULL,
      run_id TEXT NOT NULL,
      workspace_id TEXT NOT NULL,
      organization TEXT NOT NULL,
      stage TEXT NOT NULL,
      sequence INTEGER NOT NULL,
      status TEXT NOT NULL,
      status_timestamps TEXT NOT NULL, -- JSON object
      overridden INTEGER NOT NULL CHECK (overridden IN (0, 1)),
      override_comment TEXT,
      version INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    ) STRICT;
    CREATE UNIQUE INDEX task_stages_by_run ON task_stages (run_id, sequence, id);
    CREATE UNIQUE INDEX task_stages_unique_stage ON task_stages (run_id, stage);

    CREATE TABLE task_results (
      id TEXT PRIMARY KEY NOT NULL,
      stage_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      workspace_id TEXT NOT NULL,
      organization TEXT NOT NULL,
      stage TEXT NOT NULL,
      position INTEGER NOT NULL,
      status TEXT NOT NULL,
      message TEXT,
      url TEXT,
      status_timestamps TEXT NOT NULL, -- JSON object
      task_id TEXT NOT NULL,
      task_name TEXT NOT NULL,
      task_url TEXT NOT NULL,
      workspace_task_id TEXT NOT NULL,
      enforcement_level TEXT NOT NULL,
      is_speculative INTEGER NOT NULL CHECK (is_speculative IN (0, 1)),
      outcomes_count INTEGER NOT NULL,
      access_token_digest TEXT, -- SHA-256 hex of the callback token (D17)
      deadline_at TEXT,
      deadline_max_at TEXT,
      version INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    ) STRICT;
    CREATE INDEX task_results_by_stage ON task_results (stage_id, position, id);
    CREATE UNIQUE INDEX task_results_by_token ON task_results (access_token_digest) WHERE access_token_digest IS NOT NULL;

    CREATE TABLE task_result_outcomes (
      id TEXT PRIMARY KEY NOT NULL,
      task_result_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      outcome_id TEXT NOT NULL,
      description TEXT NOT NULL,
      body TEXT,
      url TEXT,
      tags TEXT NOT NULL, -- JSON object, write form
      severity_label TEXT,
      severity_rank INTEGER NOT NULL,
      status_label TEXT,
      created_at TEXT NOT NULL
    ) STRICT;
    CREATE INDEX task_result_outcomes_by_position ON task_result_outcomes (task_result_id, position, id);
    CREATE INDEX task_result_outcomes_by_severity ON task_result_outcomes (task_result_id, severity_rank DESC, position, id);

    CREATE TABLE task_deliveries (
      id TEXT PRIMARY KEY NOT NULL,
      task_result_id TEXT NOT NULL,
      stage_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      task_id TEXT NOT NULL,
      stage TEXT NOT NULL,
      url TEXT NOT NULL,
      attempt INTEGER NOT NULL,
      due_at TEXT NOT NULL,
      lease_owner TEXT,
      lease_expires_at TEXT,
      fencing_token INTEGER NOT NULL,
      payload TEXT NOT NULL, -- the keyring's sealed request body (it holds the access token)
      created_at TEXT NOT NULL,
      delivered_at TEXT
    ) STRICT;
    CREATE INDEX task_deliveries_by_result ON task_deliveries (task_result_id, created_at, id);
    -- decision D15: the dispatcher claims undelivered rows in due order.
    CREATE INDEX task_deliveries_due ON task_deliveries (due_at, id) WHERE delivered_at IS NULL;
  `,
};

/**
 * The delivery dispatcher (decisions D15, D16), appended after `RUN_TASKS_MIGRATION`: outbox rows
 * learn when they stopped needing attempts and why the last one failed; the claim walks open rows
 * in due order; the sweeper finds open results past their deadline and running stages whose
 * results are all final, each through a partial index that holds only what it looks for.
 */
export const DELIVERY_DISPATCH_MIGRATION: Migration = {
  name: "0007-delivery-dispatch",
  up: `
    ALTER TABLE task_deliveries ADD COLUMN closed_at TEXT;
    ALTER TABLE task_deliveries ADD COLUMN last_error TEXT;
    UPDATE task_deliveries SET closed_at = delivered_at WHERE delivered_at IS NOT NULL;
    DROP INDEX task_deliveries_due;
    CREATE INDEX task_deliveries_open_by_due ON task_deliveries (due_at, id) WHERE closed_at IS NULL;
    CREATE INDEX task_results_open_by_deadline ON task_results (deadline_at, id)
      WHERE deadline_at IS NOT NULL AND status IN ('pending', 'running');
    CREATE INDEX task_stages_running ON task_stages (id) WHERE status = 'running';
  `,
};

/**
 * The batched outbox: the sealed payload moves to its own table, written once when the
 * stage starts, so the outbox rows that every claim and settle rewrite stay small (a full-row
 * rewrite with the payload inside cost 3.5-4 WAL pages, without it about 2).
 */
export const DELIVERY_PAYLOADS_MIGRATION: Migration = {
  name: "0009-delivery-payloads",
  up: `
    CREATE TABLE task_delivery_payloads (
      delivery_id TEXT PRIMARY KEY NOT NULL,
      payload TEXT NOT NULL -- the keyring's sealed request body (it holds the access token)
    ) STRICT; -- a rowid table: WITHOUT ROWID stores kilobyte rows inside the key B-tree (8x slower inserts)
    INSERT INTO task_delivery_payloads (delivery_id, payload) SELECT id, payload FROM task_deliveries;
    ALTER TABLE task_deliveries DROP COLUMN payload;
  `,
};

/** decision D24: API credentials find a run's artifacts by plan id or configuration version id. */
export const RUN_ARTIFACTS_MIGRATION: Migration = {
  name: "0010-run-artifact-lookups",
  up: `
    CREATE INDEX runs_by_plan ON runs (plan_id, created_at, id);
    CREATE INDEX runs_by_configuration_version ON runs (configuration_version_id, created_at, id);
  `,
};

/**
 * A run task's `global-configuration` (JSON, camel-case keys; existing tasks get the
 * disabled default), and the by-task index widened to `(task_id, created_at, id)` so
 * `workspaceTasks.listByTask` walks it in order instead of sorting.
 */
export const RUN_TASK_GLOBAL_CONFIGURATION_MIGRATION: Migration = {
  name: "0011-run-task-global-configuration",
  up: `
    ALTER TABLE run_tasks ADD COLUMN global_configuration TEXT NOT NULL
      DEFAULT '{"enabled":false,"stages":[],"enforcementLevel":"advisory"}';
    DROP INDEX workspace_tasks_by_task;
    CREATE INDEX workspace_tasks_by_task ON workspace_tasks (task_id, created_at, id);
  `,
};

/** The results page's workspace view (D25): a workspace's runs, newest first, paged by this index. */
export const RUNS_BY_WORKSPACE_MIGRATION: Migration = {
  name: "0012-runs-by-workspace",
  up: `CREATE INDEX runs_by_workspace ON runs (workspace_id, created_at, id);`,
};
