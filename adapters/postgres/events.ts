import type { StatusChange, StatusChangeFeed } from "../../src/storage/notifications.js";
import type { NotificationHub } from "./notify.js";
import type { PgMigration } from "./migration.js";

/**
 * decision D27: every stored status change of a stage or a result sends `NOTIFY runplane_events`
 * inside its transaction (so only after COMMIT), and every process's `runTasks.on(...)` hears it.
 */
export const EVENT_CHANNEL = "runplane_events";

/**
 * A filter term for the statements that change a status: it marks the transaction with the
 * writing storage's origin id (transaction-local, so a pooled connection carries nothing over),
 * which the trigger puts in the payload so that storage's own subscription skips its own changes.
 * A statement parameter rather than a per-connection setting: a host's pool may hold connections
 * the adapter never saw being opened.
 */
export const MARK_ORIGIN = `set_config('runplane.origin', @origin::text, true) IS NOT NULL`;

/** Per kind, the payload's id fields and the columns they come from (besides from, to and at). */
const COLUMNS = {
  stage: { table: "task_stages", fields: { stageId: "id", runId: "run_id", workspaceId: "workspace_id", stage: "stage" } },
  result: { table: "task_results", fields: { taskResultId: "id", stageId: "stage_id", runId: "run_id", stage: "stage" } },
} as const;

const statusEventTrigger = (q: string, kind: keyof typeof COLUMNS): string => {
  const { table, fields } = COLUMNS[kind];
  const ids = Object.entries(fields).map(([field, column]) => `'${field}', NEW.${column}`).join(", ");
  return `
    CREATE FUNCTION ${q}runplane_${kind}_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${EVENT_CHANNEL}', json_build_object(
        'schema', TG_TABLE_SCHEMA, 'origin', current_setting('runplane.origin', true), 'kind', '${kind}',
        ${ids}, 'from', OLD.status, 'to', NEW.status, 'at', NEW.updated_at)::text);
      RETURN NULL;
    END $$;
    CREATE TRIGGER ${table}_status_event AFTER UPDATE OF status ON ${q}${table}
      FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION ${q}runplane_${kind}_event();`;
};

/**
 * Triggers rather than a NOTIFY in each statement: `from` is the row as it was (OLD), exact even
 * when another transaction changed the row between a statement's snapshot and its row lock, and
 * every path that writes a status (transitions, the settle batch's advances) is covered. The
 * payload holds the event fields only (ids, statuses, a timestamp: a few hundred bytes, far below
 * NOTIFY's 8000). The claim's window and a start's tokens change no status and send nothing.
 */
export const STATUS_EVENTS_MIGRATION: PgMigration = {
  name: "0005-status-events",
  up: (q) => statusEventTrigger(q, "stage") + statusEventTrigger(q, "result"),
};

/** The change a payload describes, or null when it is another schema's, this origin's own, or malformed. */
export function parseStatusChange(payload: string, schema: string, origin: string): StatusChange | null {
  let raw: unknown;
  try {
    raw = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof raw !== "object" || raw === null) return null;
  const p = raw as Record<string, unknown>;
  if (p.schema !== schema || p.origin === origin || (p.kind !== "stage" && p.kind !== "result")) return null;
  const change: Record<string, unknown> = { kind: p.kind };
  for (const field of [...Object.keys(COLUMNS[p.kind].fields), "from", "to", "at"]) {
    if (typeof p[field] !== "string") return null;
    change[field] = p[field];
  }
  return change as unknown as StatusChange;
}

/** `Storage.changes` on the shared listening connection: other origins' changes of `schema`. */
export function createStatusChangeFeed(hub: NotificationHub, schema: string, origin: string): StatusChangeFeed {
  return {
    subscribe: (listener) =>
      hub.subscribe({
        channel: EVENT_CHANNEL,
        onMessage(payload) {
          const change = parseStatusChange(payload, schema, origin);
          if (change) listener(change);
        },
        onReconnect: () => undefined,
      }),
  };
}
