import { ATTEMPT_LIMITS } from "../../src/schemas/delivery-attempts.js";
import { noReportSetSql } from "../sql/attempt-rows.js";
import { LEASE_SET, openWindowsSql, pickSql } from "../sql/delivery-statements.js";
import { DELIVERIES } from "../sql/run-task-rows.js";
import { pgDialect } from "./sql.js";

/** The outbox row's columns, aliased; its immutable payload lives apart, in `task_delivery_payloads`. */
export const ROW = (alias: string) => DELIVERIES.columns.map((c) => `${alias}.${c}`).join(", ");

/**
 * decision D15: one statement picks, leases and reads. `FOR UPDATE SKIP LOCKED` passes over rows
 * another claim holds, and re-checks a row that one just committed (its new lease excludes it),
 * so no two claims ever lease one row. In the same step the results still `pending` without a
 * deadline get their window (D16); decision D34: `pools` says whose rows (the platform's own, with
 * no pool, or those of some agent pools). A result that the window opened is read from the UPDATE's
 * RETURNING (the statement's snapshot predates it), any other as the snapshot holds it. decision D58:
 * `agents` (an agent dispatcher's claim) also closes its rows' attempts that no agent reported, and
 * the lease counts them on their rows. The pick, the lease and the window are the shared statements (D57).
 */
export function claimSql(q: string, pools: string, agents: boolean): string {
  const d = pgDialect(q);
  return `WITH picked AS (${pickSql(d, pools, agents ? "id, task_result_id, attempt" : "id")}),
    ${agents ? `${unreportedSql(q)},` : ""}
    leased AS (
      UPDATE ${q}task_deliveries AS d SET ${LEASE_SET}${
        agents
          ? `,
        attempt = d.attempt + (CASE WHEN u.delivery_id IS NULL THEN 0 ELSE 1 END), last_error = coalesce(u.detail, d.last_error)
      FROM picked LEFT JOIN unreported u ON u.delivery_id = picked.id`
          : `
      FROM picked`
      } WHERE d.id = picked.id
      RETURNING ${ROW("d")}),
    opened AS (${openWindowsSql(d, "SELECT task_result_id FROM leased")}
      RETURNING r.id, r.status, r.status_timestamps, r.deadline_at, r.version, r.updated_at)
    SELECT ${ROW("l")}, p.payload,
      r.id IS NOT NULL AS result_found,
      coalesce(o.status, r.status) AS result_status,
      coalesce(o.status_timestamps, r.status_timestamps) AS result_status_timestamps,
      coalesce(o.deadline_at, r.deadline_at) AS result_deadline_at,
      coalesce(o.version, r.version) AS result_version,
      coalesce(o.updated_at, r.updated_at) AS result_updated_at,
      t.id IS NOT NULL AS task_found, t.hmac_key AS task_hmac_key
    FROM leased l
    JOIN ${q}task_delivery_payloads p ON p.delivery_id = l.id
    LEFT JOIN opened o ON o.id = l.task_result_id
    LEFT JOIN ${q}task_results r ON r.id = l.task_result_id
    LEFT JOIN ${q}run_tasks t ON t.id = l.task_id
    ORDER BY l.due_at, l.id`;
}

/**
 * decision D58: an agent dispatcher's claim closes the attempts of its rows that an agent took and
 * never reported (by the attempts' primary key), and the lease counts them on their rows.
 */
const unreportedSql = (q: string): string => `unreported AS (
      UPDATE ${q}delivery_attempts AS a
      SET ${noReportSetSql("greatest(0, round(extract(epoch FROM (@now::timestamptz - a.started_at::timestamptz)) * 1000))::int")}
      FROM picked p
      WHERE a.task_result_id = p.task_result_id AND a.slot = p.attempt % ${ATTEMPT_LIMITS.perResult} AND a.number = p.attempt + 1
        AND a.delivery_id = p.id AND a.outcome = 'under-way'
      RETURNING a.delivery_id, a.detail)`;
