import type { PgMigration } from "./migration.js";
import { TEXT } from "./sql.js";

/**
 * The run task tables (decisions D13, D15-D18): the SQLite adapter's final shape (its migrations
 * 0006 and 0007 and the payload table) in one step, with two PostgreSQL additions: a workspace
 * task's `task_id` is a foreign key (the insert takes a share lock on the task, so a racing task
 * delete can never leave an orphan, and deleting the task cascades), and the immutable delivery
 * payload lives in its own table so claims and settles rewrite only small rows.
 */
export const RUN_TASKS_MIGRATION: PgMigration = {
  name: "0003-run-tasks",
  up: (q) => `
    CREATE TABLE ${q}run_tasks (
      id ${TEXT} PRIMARY KEY, organization ${TEXT} NOT NULL, name ${TEXT} NOT NULL, url ${TEXT} NOT NULL,
      description ${TEXT}, category ${TEXT} NOT NULL,
      enabled integer NOT NULL CHECK (enabled IN (0, 1)),
      hmac_key ${TEXT}, -- the keyring's sealed string (D11), never plaintext
      version integer NOT NULL, created_at ${TEXT} NOT NULL, updated_at ${TEXT} NOT NULL);
    CREATE UNIQUE INDEX run_tasks_unique_name ON ${q}run_tasks (organization, name);
    CREATE INDEX run_tasks_by_organization ON ${q}run_tasks (organization, created_at, id);
    CREATE INDEX run_tasks_sealed_by_id ON ${q}run_tasks (id) WHERE hmac_key IS NOT NULL;

    CREATE TABLE ${q}workspace_tasks (
      id ${TEXT} PRIMARY KEY, workspace_id ${TEXT} NOT NULL, organization ${TEXT} NOT NULL,
      task_id ${TEXT} NOT NULL CONSTRAINT workspace_tasks_task REFERENCES ${q}run_tasks (id) ON DELETE CASCADE,
      enforcement_level ${TEXT} NOT NULL,
      stages ${TEXT} NOT NULL, -- JSON array
      version integer NOT NULL, created_at ${TEXT} NOT NULL, updated_at ${TEXT} NOT NULL);
    CREATE UNIQUE INDEX workspace_tasks_unique_task ON ${q}workspace_tasks (workspace_id, task_id);
    CREATE INDEX workspace_tasks_by_workspace ON ${q}workspace_tasks (workspace_id, created_at, id);
    CREATE INDEX workspace_tasks_by_task ON ${q}workspace_tasks (task_id);

    CREATE TABLE ${q}runs (
      id ${TEXT} PRIMARY KEY, organization ${TEXT} NOT NULL, workspace_id ${TEXT} NOT NULL,
      message ${TEXT} NOT NULL, created_by ${TEXT} NOT NULL, created_at ${TEXT} NOT NULL,
      is_speculative integer NOT NULL CHECK (is_speculative IN (0, 1)),
      configuration_version_id ${TEXT} NOT NULL,
      configuration_version_downloadable integer NOT NULL CHECK (configuration_version_downloadable IN (0, 1)),
      plan_id ${TEXT} NOT NULL,
      vcs ${TEXT}); -- JSON object or NULL

    CREATE TABLE ${q}task_stages (
      id ${TEXT} PRIMARY KEY, run_id ${TEXT} NOT NULL, workspace_id ${TEXT} NOT NULL, organization ${TEXT} NOT NULL,
      stage ${TEXT} NOT NULL, sequence integer NOT NULL, status ${TEXT} NOT NULL,
      status_timestamps ${TEXT} NOT NULL, -- JSON object
      overridden integer NOT NULL CHECK (overridden IN (0, 1)), override_comment ${TEXT},
      version integer NOT NULL, created_at ${TEXT} NOT NULL, updated_at ${TEXT} NOT NULL);
    CREATE UNIQUE INDEX task_stages_by_run ON ${q}task_stages (run_id, sequence, id);
    CREATE UNIQUE INDEX task_stages_unique_stage ON ${q}task_stages (run_id, stage);
    CREATE INDEX task_stages_running ON ${q}task_stages (id) WHERE status = 'running';

    CREATE TABLE ${q}task_results (
      id ${TEXT} PRIMARY KEY, stage_id ${TEXT} NOT NULL, run_id ${TEXT} NOT NULL, workspace_id ${TEXT} NOT NULL,
      organization ${TEXT} NOT NULL, stage ${TEXT} NOT NULL, position integer NOT NULL, status ${TEXT} NOT NULL,
      message ${TEXT}, url ${TEXT},
      status_timestamps ${TEXT} NOT NULL, -- JSON object
      task_id ${TEXT} NOT NULL, task_name ${TEXT} NOT NULL, task_url ${TEXT} NOT NULL,
      workspace_task_id ${TEXT} NOT NULL, enforcement_level ${TEXT} NOT NULL,
      is_speculative integer NOT NULL CHECK (is_speculative IN (0, 1)),
      outcomes_count integer NOT NULL,
      access_token_digest ${TEXT}, -- SHA-256 hex of the callback token (D17)
      deadline_at ${TEXT}, deadline_max_at ${TEXT},
      version integer NOT NULL, created_at ${TEXT} NOT NULL, updated_at ${TEXT} NOT NULL);
    CREATE INDEX task_results_by_stage ON ${q}task_results (stage_id, position, id);
    CREATE UNIQUE INDEX task_results_by_token ON ${q}task_results (access_token_digest) WHERE access_token_digest IS NOT NULL;
    -- decision D16: the sweeper finds open results past their deadline, and running stages whose
    -- results are all final, through partial indexes holding only what it looks for.
    CREATE INDEX task_results_open_by_deadline ON ${q}task_results (deadline_at, id)
      WHERE deadline_at IS NOT NULL AND status IN ('pending', 'running');
    CREATE INDEX task_results_open_by_stage ON ${q}task_results (stage_id) WHERE status IN ('pending', 'running');

    CREATE TABLE ${q}task_result_outcomes (
      id ${TEXT} PRIMARY KEY, task_result_id ${TEXT} NOT NULL, position integer NOT NULL,
      outcome_id ${TEXT} NOT NULL, description ${TEXT} NOT NULL, body ${TEXT}, url ${TEXT},
      tags ${TEXT} NOT NULL, -- JSON object, write form, key order kept
      severity_label ${TEXT}, severity_rank integer NOT NULL, status_label ${TEXT}, created_at ${TEXT} NOT NULL);
    CREATE INDEX task_result_outcomes_by_position ON ${q}task_result_outcomes (task_result_id, position, id);
    CREATE INDEX task_result_outcomes_by_severity ON ${q}task_result_outcomes (task_result_id, severity_rank DESC, position, id);

    CREATE TABLE ${q}task_deliveries (
      id ${TEXT} PRIMARY KEY, task_result_id ${TEXT} NOT NULL, stage_id ${TEXT} NOT NULL, run_id ${TEXT} NOT NULL,
      task_id ${TEXT} NOT NULL, stage ${TEXT} NOT NULL, url ${TEXT} NOT NULL,
      attempt integer NOT NULL, due_at ${TEXT} NOT NULL,
      lease_owner ${TEXT}, lease_expires_at ${TEXT}, fencing_token integer NOT NULL,
      created_at ${TEXT} NOT NULL, delivered_at ${TEXT}, closed_at ${TEXT}, last_error ${TEXT});
    CREATE INDEX task_deliveries_by_result ON ${q}task_deliveries (task_result_id, created_at, id);
    -- decision D15: the dispatcher claims open rows in due order.
    CREATE INDEX task_deliveries_open_by_due ON ${q}task_deliveries (due_at, id) WHERE closed_at IS NULL;

    CREATE TABLE ${q}task_delivery_payloads (
      delivery_id ${TEXT} PRIMARY KEY REFERENCES ${q}task_deliveries (id) ON DELETE CASCADE,
      payload ${TEXT} NOT NULL); -- the keyring's sealed request body (it holds the access token)
  `,
};

/** decision D24: API credentials find a run's artifacts by plan id or configuration version id. */
export const RUN_ARTIFACTS_MIGRATION: PgMigration = {
  name: "0006-run-artifact-lookups",
  up: (q) => `
    CREATE INDEX runs_by_plan ON ${q}runs (plan_id, created_at, id);
    CREATE INDEX runs_by_configuration_version ON ${q}runs (configuration_version_id, created_at, id);
  `,
};

/**
 * A run task's `global-configuration` (JSON text, camel-case keys; existing tasks get the
 * disabled default), and the by-task index widened to `(task_id, created_at, id)` so
 * `workspaceTasks.listByTask` reads in order.
 */
export const RUN_TASK_GLOBAL_CONFIGURATION_MIGRATION: PgMigration = {
  name: "0007-run-task-global-configuration",
  up: (q) => `
    ALTER TABLE ${q}run_tasks ADD COLUMN global_configuration ${TEXT} NOT NULL
      DEFAULT '{"enabled":false,"stages":[],"enforcementLevel":"advisory"}';
    DROP INDEX ${q}workspace_tasks_by_task;
    CREATE INDEX workspace_tasks_by_task ON ${q}workspace_tasks (task_id, created_at, id);
  `,
};

/** The results page's workspace view (D25): a workspace's runs, newest first, paged by this index. */
export const RUNS_BY_WORKSPACE_MIGRATION: PgMigration = {
  name: "0008-runs-by-workspace",
  up: (q) => `CREATE INDEX runs_by_workspace ON ${q}runs (workspace_id, created_at, id);`,
};

/**
 * Cheaper outbox writes. The payload's foreign key cost a lookup per stored payload and
 * guarded nothing (outbox rows are never deleted; one statement writes both rows). Outbox pages
 * keep 40 % free, so an update that changes no indexed column (a claim's lease) is written in
 * place as a heap-only tuple, without a new entry in every index. Results likewise: their open
 * flag is a stored generated column that the deadline index filters on, so a delivered result's
 * `pending -> running` changes no indexed column and is written in place; before, every result
 * update (start, claim, delivery) wrote an entry into each index. `task_results_open_by_stage` goes:
 * the sweeper's check for a running stage without open results reads the stage's few results
 * through `task_results_by_stage`. Adding the column rewrites `task_results` once, under lock.
 */
export const OUTBOX_HOT_UPDATES_MIGRATION: PgMigration = {
  name: "0009-outbox-hot-updates",
  up: (q) => `
    ALTER TABLE ${q}task_delivery_payloads DROP CONSTRAINT task_delivery_payloads_delivery_id_fkey;
    ALTER TABLE ${q}task_deliveries SET (fillfactor = 60);
    DROP INDEX ${q}task_results_open_by_stage;
    ALTER TABLE ${q}task_results ADD COLUMN open integer GENERATED ALWAYS AS (CASE WHEN status IN ('pending', 'running') THEN 1 END) STORED;
    DROP INDEX ${q}task_results_open_by_deadline;
    CREATE INDEX task_results_open_by_deadline ON ${q}task_results (deadline_at, id) WHERE open = 1 AND deadline_at IS NOT NULL;
    ALTER TABLE ${q}task_results SET (fillfactor = 70);
  `,
};
