import type { ResultStatus } from "../schemas/run-tasks.js";
import type { ServiceContext } from "./context.js";

/**
 * decision D31: where a result's run task request stands, in the facts people need to read a
 * failing integration (the results page words them): how many attempts, when the next one is due
 * (the outbox row's due time, D15) and when the result gives up (its deadline, D16). Reads only.
 */
export interface DeliveryStatus {
  /** The instance's clock when this was read, so "next try in 40 s" is measured on the same clock. */
  now: string;
  resultStatus: ResultStatus;
  /** decision D16: no attempt starts at or after it; null until the first attempt opened the window. */
  deadlineAt: string | null;
  /** Attempts made so far (not counting one under way). */
  attempts: number;
  /** The next attempt's due time while the request waits for one; null once it needs none. */
  nextAt: string | null;
  /** A dispatcher holds the row: an attempt is being made (or about to be) now. */
  underWay: boolean;
  /** The integration answered an attempt with 200. */
  delivered: boolean;
  /** Why the latest attempt failed, in the delivery's stored words (`responded with 401`). */
  lastError: string | null;
}

export function createDeliveryStatusReader(ctx: Pick<ServiceContext, "storage" | "now">) {
  /** A result's delivery status, or null when there is no such result. */
  return async function deliveryStatus(taskResultId: string): Promise<DeliveryStatus | null> {
    const [result, rows] = await Promise.all([ctx.storage.taskResults.get(taskResultId), ctx.storage.taskDeliveries.listByResult(taskResultId)]);
    if (!result) return null;
    const now = ctx.now();
    // A result has one row (D15); of several, the newest speaks for it.
    const row = rows.at(-1);
    const open = row !== undefined && row.closedAt === null;
    return {
      now: now.toISOString(),
      resultStatus: result.status,
      deadlineAt: result.deadlineAt,
      attempts: row?.attempt ?? 0,
      nextAt: open ? row.dueAt : null,
      underWay: open && row.leaseExpiresAt !== null && Date.parse(row.leaseExpiresAt) > now.getTime(),
      delivered: rows.some((r) => r.deliveredAt !== null),
      lastError: row?.lastError ?? null,
    };
  };
}
export type DeliveryStatusReader = ReturnType<typeof createDeliveryStatusReader>;
