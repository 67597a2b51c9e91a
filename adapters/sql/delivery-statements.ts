import type { DeliverySettlement, GuardedResultWrite } from "../../src/storage/run-tasks-types.js";
import { ATTEMPTS, toAttemptRow, upsertAttemptSql } from "./attempt-rows.js";
import { DELIVERIES } from "./delivery-rows.js";
import { TASK_RESULT_START, toTaskResultRow } from "./stage-rows.js";

/**
 * decision D57: the delivery path's batch statements, written once for both SQL dialects. A
 * statement takes a whole batch as one input table (one row per entry) and writes it in one go;
 * the dialects differ only in what `SqlDialect` says: how the batch's rows are bound as a table,
 * how a JSON array of statuses is tested, and what RETURNING may name. How the statements compose is
 * the adapter's: PostgreSQL joins them into one statement with data-modifying CTEs, SQLite runs
 * them one after another inside its transaction, passing what one wrote to the next.
 */
export type Column = readonly [name: string, type: "text" | "int"];

export interface SqlDialect {
  /** The schema prefix of table names (`"runplane".`; empty on SQLite). */
  readonly q: string;
  /**
   * The batch input `param` (rows of objects) as a FROM item named `alias`, typed by `columns`:
   * PostgreSQL binds it as one JSON parameter, SQLite as a VALUES list of the rows' values.
   */
  records(param: string, alias: string, columns: readonly Column[]): string;
  /** Whether the text `value` is one of the JSON array of strings `array`. */
  inJson(value: string, array: string): string;
  /** A RETURNING clause of the updated table's `column` (SQLite names it bare, PostgreSQL by alias). */
  returning(alias: string, column: string): string;
  /** How a claim's pick passes over rows other claims hold (PostgreSQL); empty where a writer is alone (SQLite). */
  readonly skipLocked: string;
}

/**
 * decision D15: a claim's pick: the open rows due and not leased, in due order, `@limit` of them
 * (the index `task_deliveries_open_by_due`, or `_open_by_pool`). decision D34: `pools` says whose
 * rows, the platform's own (no pool) or those of some agent pools.
 */
export const pickSql = (d: SqlDialect, pools: string, columns = "id"): string => `SELECT ${columns} FROM ${d.q}task_deliveries
    WHERE closed_at IS NULL AND ${pools} AND due_at <= @now AND (lease_expires_at IS NULL OR lease_expires_at <= @now)
    ORDER BY due_at, id LIMIT @limit${d.skipLocked}`;

/** The lease a claim writes on each row it picked: its owner, its end and a new fencing token. */
export const LEASE_SET = `lease_owner = @owner, lease_expires_at = @lease_expires_at, fencing_token = fencing_token + 1`;

/**
 * decision D16: the window of each claimed row's result opens at its first attempt, in the claim
 * that hands the attempt out: only a result still `pending` without a deadline. `ids` is the
 * result ids' subquery.
 */
export const openWindowsSql = (d: SqlDialect, ids: string): string => `UPDATE ${d.q}task_results AS r
    SET deadline_at = @deadline_at, deadline_max_at = CAST(@deadline_max_at AS text), version = r.version + 1, updated_at = @now
    WHERE r.id IN (${ids}) AND r.status = 'pending' AND r.deadline_at IS NULL`;

/** One settlement of `TaskDeliveryStore.settle`: its row, its lease's token and what it writes. */
export const SETTLE_ENTRY: readonly Column[] = [
  ["id", "text"],
  ["token", "int"],
  ["type", "text"],
  ["attempt", "int"],
  ["closed_at", "text"],
  ["delivered_at", "text"],
  ["due_at", "text"],
  ["last_error", "text"],
];

/** A close's result advance: the result's new state and the state it must still be in. */
export const RESULT_ADVANCE: readonly Column[] = [
  ["delivery_id", "text"],
  ["result_id", "text"],
  ["expected_version", "int"],
  ["expected_statuses", "text"],
  ["status", "text"],
  ["status_timestamps", "text"],
  ["version", "int"],
  ["updated_at", "text"],
];

export const ATTEMPT_COLUMNS: readonly Column[] = ATTEMPTS.columns.map((c) => [c, ["slot", "number", "duration_ms", "status", "excerpt_truncated"].includes(c) ? "int" : "text"]);

/**
 * decision D15: every entry's row write, guarded by its fencing token and an open row (a stale
 * token or a closed row writes nothing). Close, retry and release differ only in which columns
 * they take; every one drops the lease. The open check is spelled so that it does not imply the
 * open rows' partial index predicate, an index PostgreSQL's planner would otherwise read whole.
 */
export const settleRowsSql = (d: SqlDialect): string => `UPDATE ${d.q}task_deliveries AS d SET
    attempt = CASE WHEN i.type = 'release' THEN d.attempt ELSE i.attempt END,
    closed_at = CASE WHEN i.type = 'close' THEN i.closed_at ELSE d.closed_at END,
    delivered_at = CASE WHEN i.type = 'close' THEN i.delivered_at ELSE d.delivered_at END,
    due_at = CASE WHEN i.type = 'retry' THEN i.due_at ELSE d.due_at END,
    last_error = CASE WHEN i.type = 'release' THEN d.last_error ELSE i.last_error END,
    lease_owner = NULL, lease_expires_at = NULL
  FROM ${d.records("entries", "i", SETTLE_ENTRY)}
  WHERE d.id = i.id AND i.type <> 'hand-out' AND d.fencing_token = i.token AND coalesce(d.closed_at, '') = ''
  ${d.returning("d", "id")}`;

/**
 * decision D58: a hand-out's row is only checked, never written: still open and held by the
 * entry's token (its claim was not replaced), so the job's `under-way` record may be stored.
 * `lock` keeps the row so until the statement's transaction ends (PostgreSQL `FOR SHARE`).
 */
export const heldRowsSql = (d: SqlDialect, lock = ""): string => `SELECT d.id FROM ${d.q}task_deliveries AS d
  JOIN ${d.records("entries", "i", SETTLE_ENTRY)} ON d.id = i.id
  WHERE i.type = 'hand-out' AND d.fencing_token = i.token AND coalesce(d.closed_at, '') = ''${lock}`;

/**
 * decision D15: the results of the rows closed move on (`pending -> running`) while each is still
 * in the state its claim read (version and status); `extra` narrows it further (PostgreSQL: to
 * the rows the same statement wrote).
 */
export const advanceResultsSql = (d: SqlDialect, extra = ""): string => `UPDATE ${d.q}task_results AS r
  SET status = a.status, status_timestamps = a.status_timestamps, version = a.version, updated_at = a.updated_at
  FROM ${d.records("advances", "a", RESULT_ADVANCE)}
  WHERE r.id = a.result_id AND r.version = a.expected_version AND ${d.inJson("r.status", "a.expected_statuses")}${extra}`;

/**
 * decision D31: the attempts of the rows written take their results' places (attempt-rows.ts):
 * of two in one batch for one place, the newer. `where` narrows the input (PostgreSQL: to the rows
 * the same statement wrote). PostgreSQL refuses to update one row twice in a statement, so there
 * the newer is picked first (`newestOnly`, a window: both dialects have it); SQLite's upsert takes
 * the rows in turn, and the newer wins by the upsert's own condition, without the window's sort.
 */
export const recordAttemptsSql = (d: SqlDialect, where = "true", newestOnly = true): string =>
  upsertAttemptSql(
    `${d.q}delivery_attempts`,
    newestOnly
      ? `SELECT ${ATTEMPTS.columns.join(", ")} FROM (
      SELECT a.*, row_number() OVER (PARTITION BY a.task_result_id, a.slot ORDER BY a.number DESC) AS newest
      FROM ${d.records("attempts", "a", ATTEMPT_COLUMNS)} WHERE ${where}) AS a
    WHERE newest = 1`
      : `SELECT ${ATTEMPTS.columns.join(", ")} FROM ${d.records("attempts", "a", ATTEMPT_COLUMNS)} WHERE ${where}`,
  );

/** A starting stage's result: its new token, pool and window, and the state it must still be in. */
export const RESULT_START: readonly Column[] = [
  ["stage_id", "text"],
  ["id", "text"],
  ...TASK_RESULT_START.map((c): Column => [c, c === "version" ? "int" : "text"]),
  ["expected_version", "int"],
  ["expected_statuses", "text"],
];

/**
 * decision D17: a starting stage's results get their tokens (as digests), pools and windows in one
 * statement, each while it is still as the start read it; `extra` narrows it (PostgreSQL: to the
 * stages whose every guard held). The caller compares the rows written with the rows asked for.
 */
export const startResultsSql = (d: SqlDialect, extra = ""): string => `UPDATE ${d.q}task_results AS r
  SET ${TASK_RESULT_START.map((c) => `${c} = i.${c}`).join(", ")}
  FROM ${d.records("results", "i", RESULT_START)}
  WHERE r.id = i.id AND r.version = i.expected_version AND ${d.inJson("r.status", "i.expected_statuses")}${extra}`;

/** The outbox row's columns with their types, as `TaskDeliveryStore` rows carry them (delivery-rows.ts). */
export const DELIVERY_COLUMNS: readonly Column[] = DELIVERIES.columns.map((c) => [c, ["attempt", "fencing_token"].includes(c) ? "int" : "text"]);

/** decision D15: a stage start's outbox rows, every one in one statement; `where` narrows them. */
export const insertDeliveriesSql = (d: SqlDialect, where = "true"): string => `INSERT INTO ${d.q}task_deliveries (${DELIVERIES.columns.join(", ")})
  SELECT ${DELIVERIES.columns.join(", ")} FROM ${d.records("rows", "r", DELIVERY_COLUMNS)} WHERE ${where}`;

/** Their sealed payloads (D14), in their own table, written once. */
export const PAYLOAD: readonly Column[] = [
  ["id", "text"],
  ["stage_id", "text"],
  ["payload", "text"],
];
export const insertPayloadsSql = (d: SqlDialect, where = "true", from = d.records("payloads", "p", PAYLOAD)): string =>
  `INSERT INTO ${d.q}task_delivery_payloads (delivery_id, payload) SELECT p.id, p.payload FROM ${from} WHERE ${where}`;

/** A settle batch as the JSON parameters of the statements above (`entries`, `advances`, `attempts`). */
export function settleInput(batch: readonly DeliverySettlement[]) {
  const entries = batch.map((e) => ({
    id: e.id,
    token: e.fencingToken,
    type: e.type,
    attempt: "fields" in e ? e.fields.attempt : null,
    closed_at: e.type === "close" ? e.fields.closedAt : null,
    delivered_at: e.type === "close" ? e.fields.deliveredAt : null,
    due_at: e.type === "retry" ? e.fields.dueAt : null,
    last_error: "fields" in e ? e.fields.lastError : null,
  }));
  const advances = batch.flatMap((e) => {
    if (e.type !== "close" || !e.result) return [];
    const r = e.result;
    const state = { status: r.status, status_timestamps: JSON.stringify(r.statusTimestamps), version: r.version, updated_at: r.updatedAt };
    return [{ delivery_id: e.id, result_id: r.id, expected_version: r.expected.version, expected_statuses: JSON.stringify(r.expected.statuses), ...state }];
  });
  const attempts = batch.flatMap((e) => (e.type !== "release" && e.record ? [toAttemptRow(e.record)] : []));
  return { entries, advances, attempts };
}
export type SettleInput = ReturnType<typeof settleInput>;

/** A starting stage's result writes as the rows of {@link startResultsSql}'s `@results`. */
export const resultStarts = (stageId: string, writes: readonly GuardedResultWrite[]) =>
  writes.map((w) => {
    const row = toTaskResultRow(w.next);
    const start = Object.fromEntries(TASK_RESULT_START.map((c) => [c, row[c]]));
    return { stage_id: stageId, id: row.id, ...start, expected_version: w.expected.version, expected_statuses: JSON.stringify(w.expected.statuses) };
  });
