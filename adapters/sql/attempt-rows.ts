import type { AttemptOutcomeKind, DeliveryAttemptRecord } from "../../src/schemas/delivery-attempts.js";
import { attemptSlot, NO_REPORT } from "../../src/storage/outbox-rules.js";
import type { TableColumns } from "./statements.js";

/**
 * The `delivery_attempts` table (decision D31), shared by the SQLite and PostgreSQL adapters. Its
 * key is `(task_result_id, slot)`: an attempt's upsert takes its result's place `slot` only from
 * an older number, so a result never holds more than 20 rows, whoever writes at once.
 */
export interface AttemptRow {
  task_result_id: string;
  slot: number;
  id: string;
  delivery_id: string;
  number: number;
  started_at: string;
  duration_ms: number;
  outcome: string;
  status: number | null;
  error_code: string | null;
  detail: string;
  excerpt: string | null;
  excerpt_truncated: number;
  /** decision D34: migration 0018 (SQLite), 0015 (PostgreSQL). */
  agent_id: string | null;
  /** decision D58: migration 0021 (SQLite), 0018 (PostgreSQL). */
  agent_name: string | null;
}

export const ATTEMPTS: TableColumns<AttemptRow> = {
  table: "delivery_attempts",
  columns: [
    "task_result_id",
    "slot",
    "id",
    "delivery_id",
    "number",
    "started_at",
    "duration_ms",
    "outcome",
    "status",
    "error_code",
    "detail",
    "excerpt",
    "excerpt_truncated",
    "agent_id",
    "agent_name",
  ],
};

/** The columns an upsert replaces when it takes a place (all but the key). */
export const ATTEMPT_REPLACED = ATTEMPTS.columns.filter((c) => c !== "task_result_id" && c !== "slot");

export const toAttemptRow = (r: DeliveryAttemptRecord): AttemptRow => ({
  task_result_id: r.taskResultId,
  slot: attemptSlot(r.number),
  id: r.id,
  delivery_id: r.deliveryId,
  number: r.number,
  started_at: r.startedAt,
  duration_ms: r.durationMs,
  outcome: r.outcome,
  status: r.status,
  error_code: r.errorCode,
  detail: r.detail,
  excerpt: r.excerpt,
  excerpt_truncated: r.excerptTruncated ? 1 : 0,
  agent_id: r.agentId ?? null,
  agent_name: r.agentName ?? null,
});

export const fromAttemptRow = (row: AttemptRow): DeliveryAttemptRecord => ({
  id: row.id,
  taskResultId: row.task_result_id,
  deliveryId: row.delivery_id,
  number: Number(row.number),
  startedAt: row.started_at,
  durationMs: Number(row.duration_ms),
  outcome: row.outcome as AttemptOutcomeKind,
  status: row.status === null ? null : Number(row.status),
  errorCode: row.error_code,
  detail: row.detail,
  excerpt: row.excerpt,
  excerptTruncated: Number(row.excerpt_truncated) === 1,
  agentId: row.agent_id ?? null,
  agentName: row.agent_name ?? null,
});

/**
 * The upsert of one attempt into its place: it replaces the stored attempt only when it is newer
 * (D31), or is the same attempt still `under-way`, which its end completes (D58; `takesSlot`).
 * `source` is what the INSERT reads its rows from (`VALUES (...)` or a `SELECT`).
 */
export const upsertAttemptSql = (table: string, source: string): string => {
  const stored = table.split(".").at(-1);
  return `INSERT INTO ${table} (${ATTEMPTS.columns.join(", ")}) ${source}
    ON CONFLICT (task_result_id, slot) DO UPDATE SET ${ATTEMPT_REPLACED.map((c) => `${c} = excluded.${c}`).join(", ")}
    WHERE excluded.number > ${stored}.number OR (excluded.number = ${stored}.number AND ${stored}.outcome = 'under-way')`;
};

/**
 * decision D58: the SET list that closes an `under-way` attempt as `no-report` (`noReportDetail`
 * spelled in SQL, the agent's name else its id); `durationMs` is the adapter's expression.
 */
export const noReportSetSql = (durationMs: string): string =>
  `outcome = 'failed', status = NULL, error_code = '${NO_REPORT.code}', duration_ms = ${durationMs},
    detail = '${NO_REPORT.before}' || coalesce(agent_name, agent_id, '') || '${NO_REPORT.after}'`;
